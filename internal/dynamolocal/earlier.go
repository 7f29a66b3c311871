package dynamolocal

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// PerTable is an Azure table as the releases before the shared table kept
// it, which tablebridge still serves where it is (a placement,
// docs/design.md): a DynamoDB table of its own and a catalog entry that
// names it, without an id.
type PerTable struct {
	// Prefix is the deployment's table prefix: its catalog is Prefix +
	// "catalog", which must exist.
	Prefix string
	// Account and Table name the Azure table; the account is not empty.
	Account, Table string
	// OrderIndex gives the DynamoDB table the order index, as those
	// releases did since the index existed (the ordered layout); without
	// it, the table is one of the unordered layout, or older.
	OrderIndex bool
}

// CreatePerTable creates p as such a release's Create Table left it, byte
// for byte: the DynamoDB table, ACTIVE, and the catalog entry, active,
// with no copies. It returns the DynamoDB table's name. Entities written
// to it through the store are the items such a release wrote (the item
// format of a placement never changed).
func CreatePerTable(ctx context.Context, client *dynamodb.Client, p PerTable) (string, error) {
	if p.Account == "" {
		return "", fmt.Errorf("dynamolocal: a per-table table needs an account name")
	}
	name := PerTableName(p.Prefix, p.Account, p.Table)
	// The table's keys, and the order index's: hash key $s, the shard (a
	// number here; the shared table's is a string), range key $o.
	keys := func(hash string, hashType types.ScalarAttributeType, rng string, rngType types.ScalarAttributeType) ([]types.KeySchemaElement, []types.AttributeDefinition) {
		return []types.KeySchemaElement{{AttributeName: aws.String(hash), KeyType: types.KeyTypeHash}, {AttributeName: aws.String(rng), KeyType: types.KeyTypeRange}},
			[]types.AttributeDefinition{{AttributeName: aws.String(hash), AttributeType: hashType}, {AttributeName: aws.String(rng), AttributeType: rngType}}
	}
	in := &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest}
	in.KeySchema, in.AttributeDefinitions = keys("PartitionKey", types.ScalarAttributeTypeS, "RowKey", types.ScalarAttributeTypeS)
	if p.OrderIndex {
		index, defs := keys("$s", types.ScalarAttributeTypeN, "$o", types.ScalarAttributeTypeB)
		in.AttributeDefinitions = append(in.AttributeDefinitions, defs...)
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String("order-20"), KeySchema: index,
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}
	}
	if _, err := client.CreateTable(ctx, in); err != nil {
		return "", fmt.Errorf("dynamolocal: create the per-table table %s: %w", name, err)
	}
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond })
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute); err != nil {
		return "", fmt.Errorf("dynamolocal: wait for %s: %w", name, err)
	}
	// The entry as such a release's Create Table finished it: claimed
	// creating with a marker, then made active and the marker removed.
	entry := map[string]types.AttributeValue{
		"Account":  &types.AttributeValueMemberS{Value: p.Account},
		"Key":      &types.AttributeValueMemberS{Value: "table:" + strings.ToLower(p.Table)},
		"Name":     &types.AttributeValueMemberS{Value: p.Table},
		"State":    &types.AttributeValueMemberS{Value: "active"},
		"Physical": &types.AttributeValueMemberS{Value: name},
		"Since":    &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339Nano)},
	}
	if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(p.Prefix + "catalog"), Item: entry}); err != nil {
		return "", fmt.Errorf("dynamolocal: write the catalog entry of %s: %w", name, err)
	}
	return name, nil
}

// PerTableName is the DynamoDB table those releases gave an Azure table:
// the prefix, the account, '.', the lower-cased table name, with every
// byte outside [A-Za-z0-9-] escaped as _xx.
func PerTableName(prefix, account, table string) string {
	var b strings.Builder
	b.WriteString(prefix)
	escapeName(&b, account)
	b.WriteByte('.')
	escapeName(&b, strings.ToLower(table))
	return b.String()
}

func escapeName(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('_')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
}
