package dynamostore

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/dynamoproxy"
	"github.com/tablebridge/tablebridge/internal/spreadload"
	"github.com/tablebridge/tablebridge/shared/store"
)

// throughProxy is an SDK option that sends the store's requests to a
// dynamoproxy in front of DynamoDB Local.
func throughProxy(t *testing.T, capacity dynamoproxy.Capacity) (*dynamoproxy.Proxy, func(*dynamodb.Options)) {
	t.Helper()
	p, err := dynamoproxy.Start(dynamoproxy.Config{Upstream: dynamolocal.Endpoint(t), Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(p.URL()) }
}

// TestPurgeWithinKeyCapacity: behind a proxy that gives each partition key
// spreadload.KeyCapacity write units a second, as DynamoDB does (throttling
// past them), the purge of a table spread over 100 PartitionKeys is never
// throttled, since it holds each key it deletes under (an entity's
// PartitionKey, an order index shard) to PurgeKeyRate. It logs its rate,
// which, working on the shards at once, is many times one key's capacity
// (docs/capacity.md; a rate is for a benchmark, not this test, to hold).
func TestPurgeWithinKeyCapacity(t *testing.T) {
	t.Parallel()
	base := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond, PurgeKeyRate: spreadload.KeyCapacity / 2})
	env := newEnv(t, base)
	const partitions, perPartition = 100, 3
	for p := range partitions {
		var ops []store.Op
		for r := range perPartition {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity(fmt.Sprintf("p%03d", p), fmt.Sprintf("r%d", r), nil)})
		}
		env.mustWrite(ops...)
	}
	if err := base.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	time.Sleep(base.recreateDelay()) // past PurgeGrace, and the tombstone may go

	proxy, via := throughProxy(t, dynamoproxy.Capacity{ReadUnits: 10 * spreadload.KeyCapacity, WriteUnits: spreadload.KeyCapacity})
	purger := sibling(t, base, via)
	before := proxy.Stats()
	start := time.Now()
	rep, err := purger.Purge(env.ctx)
	elapsed := time.Since(start)
	window := proxy.Stats().Since(before)
	if err != nil || rep != (PurgeReport{Tables: 1, Items: partitions * perPartition}) {
		t.Fatalf("Purge = %+v, %v", rep, err)
	}
	key, usage, _ := window.Hottest()
	t.Logf("purged %d items in %v (%.0f/s) with %d write units a second per key; hottest key %v: %.1f WCU",
		rep.Items, elapsed.Round(time.Millisecond), float64(rep.Items)/elapsed.Seconds(), spreadload.KeyCapacity, key, usage.WriteUnits)
	for k, u := range window.Keys {
		if u.Throttles > 0 {
			t.Errorf("key %v throttled %d times", k, u.Throttles)
		}
	}
	if items := sharedItems(t, base); len(items) != 0 {
		t.Errorf("shared table after the purge holds %q", items)
	}
}
