package linearize_test

import (
	"context"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// sharedLayout is a table prefix of its own on the shared layout: the
// catalog and the shared table, as the stack declares them.
func sharedLayout(t testing.TB) dynamostore.Options {
	prefix := dynamolocal.UniqueName("lin") + "-"
	return dynamostore.Options{TablePrefix: prefix, Endpoint: dynamolocal.Endpoint(t)}
}

// newDynamoStore is a DynamoDB store on DynamoDB Local with opts.
func newDynamoStore(t *testing.T, opts dynamostore.Options) *dynamostore.Store {
	t.Helper()
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
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithStore(newDynamoStore(t, sharedLayout(t))))
	linearize.Test(t, linearize.Config{Name: "dynamodb-shared"}, srv.Client())
}

// TestDynamoDBPlacement checks histories over DynamoDB Local on
// placements: each history's table is one an earlier release created, in
// a DynamoDB table of its own with the order index, and its catalog entry
// as that release wrote it (dynamolocal.CreatePerTable); the store serves
// it where it is.
func TestDynamoDBPlacement(t *testing.T) {
	t.Parallel()
	opts := sharedLayout(t)
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithStore(newDynamoStore(t, opts)))
	client := dynamolocal.Client(t)
	linearize.Test(t, linearize.Config{Name: "dynamodb-placement", CreateTable: func(ctx context.Context, name string) error {
		_, err := dynamolocal.CreatePerTable(ctx, client, dynamolocal.PerTable{Prefix: opts.TablePrefix,
			Account: auth.DevStoreAccountName, Table: name, OrderIndex: true})
		return err
	}}, srv.Client())
}

// TestDynamoDBTwoClocks checks histories through two servers on the same
// DynamoDB tables, as two Lambda execution environments are: each with
// its own store, catalog cache (confirmed on every operation, as the
// functions run it) and clock, one 400 ms behind the other, so each
// writes over versions stamped by the other's clock. Half of the clients
// go through each.
func TestDynamoDBTwoClocks(t *testing.T) {
	t.Parallel()
	opts := sharedLayout(t)
	opts.ConfirmTable = true
	ahead := tablebridgetest.NewServer(t, tablebridgetest.WithStore(newDynamoStore(t, opts)))
	behind := tablebridgetest.NewServer(t, tablebridgetest.WithStore(newDynamoStore(t, opts)),
		tablebridgetest.WithNow(func() time.Time { return time.Now().Add(-400 * time.Millisecond) }))
	linearize.Test(t, linearize.Config{Name: "dynamodb-two-clocks"}, ahead.Client(), behind.Client())
}

// TestDynamoDBLarge checks histories whose writes carry, one in five, a
// payload larger than a DynamoDB item: such an entity is a main item and
// overflow items written and read together, and a merge onto it, or one
// that makes it outgrow the item, takes the store's slower paths of two or
// three requests conditioned on the version they read.
func TestDynamoDBLarge(t *testing.T) {
	t.Parallel()
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithStore(newDynamoStore(t, sharedLayout(t))))
	linearize.Test(t, linearize.Config{Name: "dynamodb-large", Large: 0.2, Ops: 12, Histories: 1}, srv.Client())
}
