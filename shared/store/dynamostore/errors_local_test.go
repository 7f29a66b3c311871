package dynamostore

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

// The error classification against real answers (by type, never by
// message text: errors.go): each case makes DynamoDB Local, or the
// network, produce the error, so a change
// of the SDK's types or of DynamoDB's words fails here rather than changing
// behaviour in production.

// TestRefusedConnectionClassified: a port nothing listens on refuses the
// connection; the store knows it by syscall.ECONNREFUSED (503: nothing was
// sent), for reads and writes.
func TestRefusedConnectionClassified(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	client := dynamolocal.NewClient("http://"+addr, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	_, err = client.PutItem(t.Context(), &dynamodb.PutItemInput{
		TableName: aws.String("t"),
		Item:      item{attrPartitionKey: str("p"), attrRowKey: str("r")},
	})
	if !errors.Is(err, syscall.ECONNREFUSED) || !notSent(err) {
		t.Fatalf("PutItem to a closed port: %v; want ECONNREFUSED, known as not sent", err)
	}
	if got := mapWriteErr("write entity", err, false); !errors.Is(got, store.ErrUnavailable) {
		t.Errorf("mapWriteErr = %v; want ErrUnavailable", got)
	}
	var w writeAttempts
	attemptWatcher{Retryer: singleWriteRetryer, attempts: &w}.IsErrorRetryable(err)
	if w.maybeSent.Load() {
		t.Error("a refused attempt counted as maybe sent")
	}
}

// TestLocalErrorTypes: DynamoDB Local's answers come back as the SDK types
// the store classifies by, and the one message still read
// (isItemTooLarge: ValidationException has no type of its own and no other
// field tells an oversized update from a malformed one) is DynamoDB's.
func TestLocalErrorTypes(t *testing.T) {
	t.Parallel()
	ctx := dynamolocal.Context(t, testTimeout)
	client := dynamolocal.Client(t)
	name := dynamolocal.UniqueName("tberr")
	if _, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("k"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("k"), KeyType: types.KeyTypeHash}},
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})

	t.Run("ResourceNotFound", func(t *testing.T) {
		_, err := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name + "-missing"), Key: item{"k": str("a")}})
		if !isTableMissing(err) || !errors.Is(mapErr("get", err), store.ErrTableNotFound) {
			t.Fatalf("GetItem of a missing table: %v", err)
		}
	})
	t.Run("ResourceInUse", func(t *testing.T) {
		_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
			TableName:            aws.String(name),
			BillingMode:          types.BillingModePayPerRequest,
			AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("k"), AttributeType: types.ScalarAttributeTypeS}},
			KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("k"), KeyType: types.KeyTypeHash}},
		})
		if !isTableInUse(err) {
			t.Fatalf("CreateTable of an existing table: %v", err)
		}
	})
	t.Run("ItemTooLarge", func(t *testing.T) {
		big := strings.Repeat("x", 300<<10)
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item{"k": str("big"), "a": str(big)}}); err != nil {
			t.Fatal(err)
		}
		_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(name),
			Key:                       item{"k": str("big")},
			UpdateExpression:          aws.String("SET b = :b"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":b": str(big)},
		})
		if !isItemTooLarge(err) {
			t.Fatalf("UpdateItem past 400 KB: %v; want recognized as too large", err)
		}
		// A malformed update is a ValidationException too, and not a size.
		_, err = client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(name),
			Key:                       item{"k": str("big")},
			UpdateExpression:          aws.String("SET b = :missing"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":b": str("v")},
		})
		if err == nil || !hasUnmodeledCode(err, "ValidationException") || isItemTooLarge(err) {
			t.Fatalf("malformed UpdateItem: %v; want a ValidationException not taken for a size error", err)
		}
	})
	t.Run("ConditionalCheckFailed", func(t *testing.T) {
		_, err := client.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(name), Item: item{"k": str("big")},
			ConditionExpression:                 aws.String("attribute_not_exists(k)"),
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		if old, ok := isConditionFailed(err); !ok || old == nil {
			t.Fatalf("PutItem on a failed condition: %v", err)
		}
	})
	t.Run("MissingIndex", func(t *testing.T) {
		s := &Store{db: client, opts: Options{}.withDefaults()}
		_, err := client.Query(ctx, &dynamodb.QueryInput{
			TableName: aws.String(name), IndexName: aws.String(orderIndex),
			KeyConditionExpression:    aws.String("k = :k"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":k": str("a")},
		})
		if !s.orderIndexUnusable(ctx, name, err) {
			t.Fatalf("Query of a missing index: %v; want the index found unusable", err)
		}
		if s.orderIndexUnusable(ctx, name, &types.ThrottlingException{}) {
			t.Fatal("throttling taken for a missing index")
		}
	})
}
