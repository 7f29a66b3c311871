package main

import (
	"context"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/dynamoproxy"
	"github.com/tablebridge/tablebridge/internal/spreadload"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// TestServeOneTableAtTenKeys: serve on DynamoDB, behind a proxy that gives
// each partition key spreadload.KeyCapacity read and write units a second as DynamoDB
// does (throttling past them), passes one table spread over 200
// PartitionKeys ten times that, unthrottled: no key of its own making
// (the catalog) carries every operation, and none carries more than a
// tenth of them.
func TestServeOneTableAtTenKeys(t *testing.T) {
	t.Parallel()
	proxy, err := dynamoproxy.Start(dynamoproxy.Config{Upstream: dynamolocal.Endpoint(t),
		Capacity: dynamoproxy.Capacity{ReadUnits: spreadload.KeyCapacity, WriteUnits: spreadload.KeyCapacity}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Close() })
	ctx, stop := context.WithCancel(context.Background())
	cfg := serveConfig{listen: "127.0.0.1:0", storeKind: "dynamodb", accounts: auth.AccountList{auth.DevStoreAccount()},
		dynamo: dynamoFlags{dynamostore.Options{Endpoint: proxy.URL(), TablePrefix: dynamolocal.UniqueName("cap") + "-", RequestTimeout: 10 * time.Second}}}
	connStr, done := startServeConfig(t, ctx, cfg)
	defer func() {
		stop()
		<-done
	}()
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "Busy", nil); err != nil {
		t.Fatal(err)
	}
	spreadload.CheckTenKeys(t, proxy, svc.NewClient("Busy"))
}
