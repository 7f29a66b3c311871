package linearize_test

import (
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// newDynamoStore is a DynamoDB store on DynamoDB Local under a table
// prefix of its own: on the shared layout (the catalog and the shared
// table, as the stack declares them) or, without one, per table.
func newDynamoStore(t *testing.T, shared bool) *dynamostore.Store {
	t.Helper()
	prefix := dynamolocal.UniqueName("lin") + "-"
	opts := dynamostore.Options{TablePrefix: prefix}
	if shared {
		opts.SharedTable, opts.RecreateCatalog = prefix+"entities", true
	}
	st, err := dynamostore.New(dynamolocal.Context(t, 2*time.Minute), dynamolocal.Client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestDynamoDBShared checks histories of the whole stack over DynamoDB
// Local on the shared layout. A partition query is a DynamoDB Query,
// each item strongly consistent but not one snapshot, so queries are held
// to Azure's promise: each entity in a version of the query's interval.
func TestDynamoDBShared(t *testing.T) {
	t.Parallel()
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithStore(newDynamoStore(t, true)))
	linearize.Test(t, linearize.Config{Name: "dynamodb-shared"}, srv.Client())
}

// TestDynamoDBPerTable checks histories over DynamoDB Local on the
// per-table layout: each history's table is a DynamoDB table of its own.
func TestDynamoDBPerTable(t *testing.T) {
	t.Parallel()
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithStore(newDynamoStore(t, false)))
	linearize.Test(t, linearize.Config{Name: "dynamodb-per-table"}, srv.Client())
}
