package tablebridgetest_test

import (
	"context"
	"fmt"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// In a test, tablebridgetest.NewServer(t) does the same and closes the
// server with t.Cleanup.
func Example() {
	srv, err := tablebridgetest.Start()
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	// What an application builds from its configuration.
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if _, err := svc.CreateTable(ctx, "Orders", nil); err != nil {
		panic(err)
	}
	orders := svc.NewClient("Orders")
	if _, err := orders.AddEntity(ctx, []byte(`{"PartitionKey":"2026-11","RowKey":"42","Total":12.5}`), nil); err != nil {
		panic(err)
	}
	got, err := orders.GetEntity(ctx, "2026-11", "42", nil)
	if err != nil {
		panic(err)
	}
	var e aztables.EDMEntity
	if err := e.UnmarshalJSON(got.Value); err != nil {
		panic(err)
	}
	fmt.Println(e.PartitionKey, e.RowKey, e.Properties["Total"])
	// Output: 2026-11 42 12.5
}
