package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
)

// dynamoRegion and the dummy credentials match internal/dynamolocal's
// clients: DynamoDB Local accepts any key, and keeps one database per key
// and region.
const (
	dynamoRegion    = "us-east-1"
	dynamoAccessKey = "tablebridge"
)

// Attribute names of the direct mode's items: the entity's property names,
// with the two keys as the table's hash and range key.
const (
	attrPartitionKey = "PartitionKey"
	attrRowKey       = "RowKey"
)

// insertCondition makes a Put fail on an existing item, as an Azure insert
// fails with EntityAlreadyExists.
var insertCondition = aws.String("attribute_not_exists(" + attrPartitionKey + ")")

// dynamoTarget issues the DynamoDB calls a hand-written app would make for
// the bench's operations, with a plain aws-sdk-go-v2 client:
//
//	insert  PutItem with attribute_not_exists(PartitionKey)
//	get     GetItem, ConsistentRead
//	query   Query on the partition, ConsistentRead, following LastEvaluatedKey
//	batch   TransactWriteItems of conditional Puts
//
// The item holds the bench entity's properties as native attributes (S, N,
// BOOL, B), not tablebridge's encoding, so the figures are the baseline
// tablebridge's own DynamoDB traffic is compared with.
type dynamoTarget struct {
	client *dynamodb.Client
	table  *string
	// props are the entity's properties other than the keys. Items share
	// the attribute values, which the SDK only reads.
	props map[string]types.AttributeValue
	// pollInterval spaces the DescribeTable calls that wait for a new
	// table to become ACTIVE.
	pollInterval time.Duration
}

// newDynamoTarget builds the client the way internal/dynamolocal.NewClient
// does (static dummy credentials, us-east-1, no response checksum check:
// DynamoDB Local's error responses carry none) but on the bench's HTTP
// client, whose dialer keeps traffic on loopback. The SDK does not retry:
// like the Azure mode, the bench counts every failure instead of hiding it.
func newDynamoTarget(endpoint, table string, httpClient *http.Client, v *entityValues) *dynamoTarget {
	client := dynamodb.New(dynamodb.Options{
		Region:                          dynamoRegion,
		BaseEndpoint:                    aws.String(endpoint),
		Credentials:                     credentials.NewStaticCredentialsProvider(dynamoAccessKey, dynamoAccessKey, ""),
		DisableValidateResponseChecksum: true,
		HTTPClient:                      httpClient,
		RetryMaxAttempts:                1,
	})
	return &dynamoTarget{client: client, table: aws.String(table), props: dynamoProps(v), pollInterval: 100 * time.Millisecond}
}

// dynamoProps renders the entity's properties as native DynamoDB
// attributes. An empty Payload (an unpadded entity) is left out rather than
// stored as an empty string.
func dynamoProps(v *entityValues) map[string]types.AttributeValue {
	props := map[string]types.AttributeValue{
		"Name":    &types.AttributeValueMemberS{Value: v.Name},
		"City":    &types.AttributeValueMemberS{Value: v.City},
		"Active":  &types.AttributeValueMemberBOOL{Value: v.Active},
		"Count":   &types.AttributeValueMemberN{Value: strconv.FormatInt(int64(v.Count), 10)},
		"Total":   &types.AttributeValueMemberN{Value: strconv.FormatInt(v.Total, 10)},
		"Price":   &types.AttributeValueMemberN{Value: strconv.FormatFloat(v.Price, 'g', -1, 64)},
		"Created": &types.AttributeValueMemberS{Value: v.Created},
		"Ref":     &types.AttributeValueMemberS{Value: v.Ref},
		"Blob":    &types.AttributeValueMemberB{Value: v.Blob},
	}
	if v.Payload != "" {
		props["Payload"] = &types.AttributeValueMemberS{Value: v.Payload}
	}
	return props
}

// item returns a new item with the given keys and the entity's properties.
func (d *dynamoTarget) item(pk, rk []byte) map[string]types.AttributeValue {
	item := make(map[string]types.AttributeValue, len(d.props)+2)
	for name, value := range d.props {
		item[name] = value
	}
	item[attrPartitionKey] = &types.AttributeValueMemberS{Value: string(pk)}
	item[attrRowKey] = &types.AttributeValueMemberS{Value: string(rk)}
	return item
}

// createTable creates the run's table (PartitionKey hash, RowKey range,
// on demand) and waits until it is ACTIVE.
func (d *dynamoTarget) createTable(ctx context.Context, w *worker) error {
	w.requests++
	_, err := d.client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: d.table,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(attrPartitionKey), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(attrRowKey), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(attrPartitionKey), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(attrRowKey), KeyType: types.KeyTypeRange},
		},
		BillingMode: types.BillingModePayPerRequest,
	})
	if err != nil {
		return dynamoError("create table", err)
	}
	// DynamoDB Local creates tables ACTIVE; AWS takes a few seconds.
	waitCtx, cancel := context.WithTimeout(ctx, w.r.cfg.RequestTimeout)
	defer cancel()
	for {
		w.requests++
		out, err := d.client.DescribeTable(waitCtx, &dynamodb.DescribeTableInput{TableName: d.table})
		if err != nil {
			return dynamoError("create table: describe", err)
		}
		if out.Table != nil && out.Table.TableStatus == types.TableStatusActive {
			return nil
		}
		select {
		case <-waitCtx.Done():
			return fmt.Errorf("create table: still not ACTIVE: %w", waitCtx.Err())
		case <-time.After(d.pollInterval):
		}
	}
}

func (d *dynamoTarget) deleteTable(ctx context.Context, w *worker) error {
	w.requests++
	if _, err := d.client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: d.table}); err != nil {
		return dynamoError("delete table", err)
	}
	return nil
}

func (d *dynamoTarget) insert(ctx context.Context, w *worker) error {
	w.requests++
	_, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:           d.table,
		Item:                d.item(w.pk, w.rk),
		ConditionExpression: insertCondition,
	})
	if err != nil {
		return dynamoError("insert", err)
	}
	return nil
}

func (d *dynamoTarget) get(ctx context.Context, w *worker) error {
	w.requests++
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: d.table,
		Key: map[string]types.AttributeValue{
			attrPartitionKey: &types.AttributeValueMemberS{Value: string(w.pk)},
			attrRowKey:       &types.AttributeValueMemberS{Value: string(w.rk)},
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return dynamoError("get", err)
	}
	if out.Item == nil {
		return fmt.Errorf("get: item %s/%s not found", w.pk, w.rk)
	}
	// The same cheap check as the Azure mode: the item asked for came back.
	if rk, ok := out.Item[attrRowKey].(*types.AttributeValueMemberS); !ok || rk.Value != string(w.rk) {
		return fmt.Errorf("get: response does not hold RowKey %s", w.rk)
	}
	return nil
}

func (d *dynamoTarget) scan(ctx context.Context, w *worker, want int64) (int64, error) {
	in := &dynamodb.QueryInput{
		TableName:                 d.table,
		KeyConditionExpression:    aws.String(attrPartitionKey + " = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: string(w.pk)}},
		ConsistentRead:            aws.Bool(true),
	}
	// DynamoDB pages at 1 MB; the bound only guards against a server that
	// never stops continuing.
	maxPages := want + 2
	var rows int64
	for page := int64(0); ; page++ {
		if page == maxPages {
			return 0, fmt.Errorf("query: partition %s still continuing after %d pages", w.pk, page)
		}
		w.requests++
		out, err := d.client.Query(ctx, in)
		if err != nil {
			return 0, dynamoError("query", err)
		}
		rows += int64(len(out.Items))
		if len(out.LastEvaluatedKey) == 0 {
			return rows, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func (d *dynamoTarget) writeBatch(ctx context.Context, w *worker, pk []byte, firstRow, count int64) error {
	items := make([]types.TransactWriteItem, count)
	for j := range count {
		w.rk = appendRowKey(w.rk[:0], firstRow+j)
		items[j].Put = &types.Put{
			TableName:           d.table,
			Item:                d.item(pk, w.rk),
			ConditionExpression: insertCondition,
		}
	}
	w.requests++
	if _, err := d.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
		return dynamoError("batch", err)
	}
	return nil
}

// dynamoError turns a DynamoDB error response into a statusError, so equal
// failures group in the report (the SDK's own text carries a request id).
// Transport errors pass through for classify.
func dynamoError(op string, err error) error {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return fmt.Errorf("%s: %w", op, err)
	}
	se := &statusError{Op: op, Code: apiErr.ErrorCode(), Message: apiErr.ErrorMessage()}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		se.Status = re.HTTPStatusCode()
	}
	return se
}
