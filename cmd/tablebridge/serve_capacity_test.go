package main

import (
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/dynamoproxy"
	"github.com/tablebridge/tablebridge/internal/spreadload"
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
	_, svc := startDynamoServe(t, dynamostore.Options{Endpoint: proxy.URL(), TablePrefix: dynamolocal.UniqueName("cap") + "-", RequestTimeout: 10 * time.Second})
	if _, err := svc.CreateTable(t.Context(), "Busy", nil); err != nil {
		t.Fatal(err)
	}
	spreadload.CheckTenKeys(t, proxy, svc.NewClient("Busy"))
}
