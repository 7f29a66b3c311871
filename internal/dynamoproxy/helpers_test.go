package dynamoproxy

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// env is a proxy in front of DynamoDB Local with an SDK client through it
// (one attempt per call, response CRC32 checked) and one straight to
// DynamoDB Local, to see what was applied.
type env struct {
	proxy  *Proxy
	client *dynamodb.Client
	direct *dynamodb.Client
	ctx    context.Context
}

func newEnv(t *testing.T, cfg Config, optFns ...func(*dynamodb.Options)) *env {
	t.Helper()
	cfg.Upstream = dynamolocal.Endpoint(t) // skips under -short
	p, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	opts := append([]func(*dynamodb.Options){func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = false
		o.RetryMaxAttempts = 1
	}}, optFns...)
	return &env{
		proxy:  p,
		client: dynamolocal.NewClient(p.URL(), opts...),
		direct: dynamolocal.NewClient(cfg.Upstream),
		ctx:    dynamolocal.Context(t, time.Minute),
	}
}

// tableSpec is a test table: partition key pk and sort key rk (strings),
// on demand or provisioned, optionally with a global secondary index "byG"
// on g, projecting all.
type tableSpec struct {
	provisioned bool
	index       bool
}

func (e *env) table(t *testing.T, spec tableSpec) string {
	t.Helper()
	name := dynamolocal.UniqueName("proxy-")
	in := &dynamodb.CreateTableInput{
		TableName: aws.String(name),
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("rk"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("rk"), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	}
	if spec.provisioned {
		in.BillingMode = types.BillingModeProvisioned
		in.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: aws.Int64(100), WriteCapacityUnits: aws.Int64(100)}
	}
	if spec.index {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS})
		gsi := types.GlobalSecondaryIndex{
			IndexName:  aws.String("byG"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}
		if spec.provisioned {
			gsi.ProvisionedThroughput = in.ProvisionedThroughput
		}
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{gsi}
	}
	if _, err := e.direct.CreateTable(e.ctx, in); err != nil {
		t.Fatal(err)
	}
	return name
}

// item is an item with keys pk and rk, a payload of size bytes in d, and
// attributes extra (name, string value, ...).
func item(pk, rk string, size int, extra ...string) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"rk": &types.AttributeValueMemberS{Value: rk},
		"d":  &types.AttributeValueMemberS{Value: strings.Repeat("x", size)},
	}
	for i := 0; i+1 < len(extra); i += 2 {
		it[extra[i]] = &types.AttributeValueMemberS{Value: extra[i+1]}
	}
	return it
}

func key(pk, rk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk},
		"rk": &types.AttributeValueMemberS{Value: rk},
	}
}

func (e *env) put(t *testing.T, table string, it map[string]types.AttributeValue) {
	t.Helper()
	if _, err := e.direct.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
		t.Fatal(err)
	}
}

// stored reports whether DynamoDB Local holds the item.
func (e *env) stored(t *testing.T, table, pk, rk string) bool {
	t.Helper()
	out, err := e.direct.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key(pk, rk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item != nil
}

// usage runs fn and returns what it did to each key.
func (e *env) usage(t *testing.T, fn func()) Stats {
	t.Helper()
	before := e.proxy.Stats()
	fn()
	return e.proxy.Stats().Since(before)
}
