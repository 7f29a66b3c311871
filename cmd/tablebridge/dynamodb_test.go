package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// TestDynamoDBMoveToSharedCommand: a table an earlier release created in a
// DynamoDB table of its own (a placement) is moved into the shared table,
// verified, and served from there; running the command again finds
// nothing to move.
func TestDynamoDBMoveToSharedCommand(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	prefix := dynamolocal.UniqueName("move") + "-"
	serveOrders(t, endpoint, prefix, true)

	args := []string{"move-to-shared", "-dynamodb-endpoint", endpoint, "-table-prefix", prefix, "-settle", "10ms", "-rate", "500"}
	for i, want := range []string{"Orders (" + prefix + "devstoreaccount1.orders): 20 items copied and verified", "Orders: in the shared table already"} {
		var stdout, stderr bytes.Buffer
		if err := dynamodbCmd(context.Background(), args, &stdout, &stderr); err != nil {
			t.Fatalf("move-to-shared: %v\n%s", err, stderr.String())
		}
		if !strings.Contains(stdout.String(), want) {
			t.Fatalf("move-to-shared printed %q; want %q", stdout.String(), want)
		}
		// Progress goes to stderr, a line per phase as it starts and ends.
		if progress := stderr.String(); i == 0 && (!strings.Contains(progress, "copying Orders: 20 ") || !strings.Contains(progress, "verifying Orders: 20/20 (100.0%)")) {
			t.Errorf("move-to-shared's progress: %q", progress)
		}
	}

	st, err := (&dynamoFlags{dynamostore.Options{Endpoint: endpoint, TablePrefix: prefix}}).open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	page, err := st.QueryEntities(context.Background(), auth.DevStoreAccountName, "Orders", store.Query{Top: 1000})
	if err != nil || len(page.Entities) != 20 || page.Entities[0].PartitionKey != "c0" || page.Entities[0].Properties["Total"].Float != 0.5 {
		t.Fatalf("query after the move: %d entities, %v", len(page.Entities), err)
	}
	var stderr bytes.Buffer
	if err := dynamodbCmd(context.Background(), []string{"add-index"}, &bytes.Buffer{}, &stderr); exitCode(err) != 2 {
		t.Errorf("an unknown subcommand: %v", err)
	}
	// A table named that the account does not have: an error before
	// anything is moved.
	if err := dynamodbCmd(context.Background(), append(args, "-tables", "orders,Missing"), &bytes.Buffer{}, &stderr); err == nil || !strings.Contains(err.Error(), `table "Missing" is not in`) {
		t.Errorf("a missing table: %v", err)
	}
}

// TestDynamoDBRestoreTableCommand: a table served on the shared layout is
// restored with `tablebridge dynamodb restore-table` from a point-in-time
// copy of the shared table and the catalog (DynamoDB Local has no
// RestoreTableToPointInTime: dynamolocal.RestoreCopy stands in for it),
// under a new name and, once deleted, under its own; a restore into a
// table that has entities is refused unless -merge.
func TestDynamoDBRestoreTableCommand(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	prefix := dynamolocal.UniqueName("restore") + "-"
	serveOrders(t, endpoint, prefix, false)
	raw, err := dynamostore.NewClient(context.Background(), dynamostore.Options{Endpoint: endpoint}) // the credentials the commands use
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"entities", "catalog"} {
		if err := dynamolocal.RestoreCopy(context.Background(), raw, prefix+table, prefix+table+"-restored", true); err != nil {
			t.Fatal(err)
		}
	}

	run := func(args ...string) (string, string, error) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args = append([]string{"restore-table", "-dynamodb-endpoint", endpoint, "-table-prefix", prefix, "-settle", "10ms",
			"-from", prefix + "entities-restored", "-from-catalog", prefix + "catalog-restored"}, args...)
		err := dynamodbCmd(context.Background(), args, &stdout, &stderr)
		return stdout.String(), stderr.String(), err
	}
	stdout, stderr, err := run("-table", "Orders", "-as", "OrdersBack")
	if err != nil {
		t.Fatalf("restore-table: %v\n%s", err, stderr)
	}
	if want := "Orders restored as OrdersBack from " + prefix + "entities-restored, the items of id "; !strings.Contains(stdout, want) ||
		!strings.Contains(stdout, "through its order index: 20 items copied and verified, table created") {
		t.Errorf("restore-table printed %q; want %q ... 20 items copied and verified, table created", stdout, want)
	}
	if !strings.Contains(stderr, "copying OrdersBack: 20 ") || !strings.Contains(stderr, "verifying OrdersBack: 20/20 (100.0%)") {
		t.Errorf("restore-table's progress: %q", stderr)
	}
	if _, _, err := run("-table", "Orders", "-as", "OrdersBack"); err == nil || !strings.Contains(err.Error(), "has entities") {
		t.Errorf("a restore into a table with entities: %v", err)
	}
	if stdout, _, err := run("-table", "Orders", "-as", "OrdersBack", "-merge"); err != nil || !strings.Contains(stdout, "20 items copied and verified, into the existing table") {
		t.Errorf("a merging restore: %q, %v", stdout, err)
	}

	st, err := (&dynamoFlags{dynamostore.Options{Endpoint: endpoint, TablePrefix: prefix}}).open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.DeleteTable(context.Background(), auth.DevStoreAccountName, "Orders"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2100 * time.Millisecond) // a deleted name is free again after 2 s
	if stdout, stderr, err := run("-table", "Orders"); err != nil || !strings.Contains(stdout, "Orders restored as Orders from ") {
		t.Fatalf("restore under its own name: %q, %v\n%s", stdout, err, stderr)
	}
	for _, table := range []string{"Orders", "OrdersBack"} {
		page, err := st.QueryEntities(context.Background(), auth.DevStoreAccountName, table, store.Query{Top: 1000})
		if err != nil || len(page.Entities) != 20 || page.Entities[0].PartitionKey != "c0" || page.Entities[0].Properties["Total"].Float != 0.5 {
			t.Errorf("%s after the restore: %d entities, %v", table, len(page.Entities), err)
		}
	}

	if stdout, _, err := run("-table", "Orders", "-abandon"); err != nil || !strings.Contains(stdout, "Orders: no restore to abandon") {
		t.Errorf("-abandon with no restore: %q, %v", stdout, err)
	}
	for _, bad := range [][]string{{"-table", "Orders", "-as", "no_such-name"}, {"-table", ""}, {"-table", "Orders", "-rate", "0"}} {
		if _, _, err := run(bad...); exitCode(err) != 2 {
			t.Errorf("restore-table %v: %v; want a usage error", bad, err)
		}
	}
	if err := dynamodbCmd(context.Background(), []string{"restore-table", "-table", "Orders"}, &bytes.Buffer{}, &bytes.Buffer{}); exitCode(err) != 2 || !strings.Contains(err.Error(), "-from is required") {
		t.Errorf("restore-table without -from: %v", err)
	}
}

// serveOrders serves the tables of prefix on endpoint, creates the table
// Orders there with 20 entities (PartitionKeys c0 to c2, Total 0.5 to
// 19.5) through the Azure SDK, and stops serving. With placement, Orders
// is a table as an earlier release created it, in a DynamoDB table of its
// own with the order index (dynamolocal.CreatePerTable).
func serveOrders(t *testing.T, endpoint, prefix string, placement bool) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	cfg := serveConfig{listen: "127.0.0.1:0", storeKind: "dynamodb",
		accounts: auth.AccountList{auth.DevStoreAccount()},
		dynamo:   dynamoFlags{dynamostore.Options{Endpoint: endpoint, TablePrefix: prefix}}}
	connStr, done := startServeConfig(t, ctx, cfg)
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if placement {
		// A client built as serve builds its own: DynamoDB Local keeps
		// one database per access key.
		var raw *dynamodb.Client
		if raw, err = dynamostore.NewClient(ctx, dynamostore.Options{Endpoint: endpoint}); err != nil {
			t.Fatal(err)
		}
		_, err = dynamolocal.CreatePerTable(ctx, raw, dynamolocal.PerTable{Prefix: prefix,
			Account: auth.DevStoreAccountName, Table: "Orders", OrderIndex: true})
	} else {
		_, err = svc.CreateTable(ctx, "Orders", nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		body := fmt.Sprintf(`{"PartitionKey":"c%d","RowKey":"o%02d","Total":%d.5}`, i%3, i, i)
		if _, err := svc.NewClient("Orders").AddEntity(ctx, []byte(body), nil); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
