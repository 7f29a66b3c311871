package dynamostore

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

// benchTables is how many tables BenchmarkManyTables creates; docs/performance.md's
// figure is for 10,000:
//
//	go test -run '^$' -bench ManyTables -benchtime 1x ./shared/store/dynamostore -args -bench.tables 10000
var (
	benchTables       = flag.Int("bench.tables", 200, "tables BenchmarkManyTables creates in one account")
	benchPerPartition = flag.Int("bench.perpartition", 5, "entities to a PartitionKey in BenchmarkPurge's table")
	benchPurgeFor     = flag.Duration("bench.purgefor", time.Minute, "how long BenchmarkManyTables purges the deleted tables, to measure the rate (the rest is left to the test's cleanup)")
)

// BenchmarkTableLifecycle measures Create Table and Delete Table, one after
// the other, and reports the median and the 99th percentile of each: one
// catalog transaction each, and a GetItem before the delete.
func BenchmarkTableLifecycle(b *testing.B) {
	s := newTestStore(b)
	ctx := dynamolocal.Context(b, time.Hour)
	var creates, deletes []time.Duration
	for i := 0; b.Loop(); i++ {
		name := fmt.Sprintf("T%d", i)
		start := time.Now()
		if _, err := s.CreateTable(ctx, "acct", name); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := s.DeleteTable(ctx, "acct", name); err != nil {
			b.Fatal(err)
		}
		creates, deletes = append(creates, mid.Sub(start)), append(deletes, time.Since(mid))
	}
	reportPercentiles(b, "create", creates)
	reportPercentiles(b, "delete", deletes)
}

func reportPercentiles(b *testing.B, what string, d []time.Duration) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, what+"-p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, what+"-p99-ms")
}

// BenchmarkManyTables creates -bench.tables tables in one account of the
// shared layout, lists them with paging, inserts into and queries each,
// deletes them all, and purges them for at most -bench.purgefor, reporting
// each phase's rate.
func BenchmarkManyTables(b *testing.B) {
	for b.Loop() {
		s := newTestStoreWith(b, Options{PurgeGrace: time.Millisecond, PurgeRate: 100_000})
		ctx := dynamolocal.Context(b, time.Hour)
		n := *benchTables
		phase := func(name string, each func(i int) error) {
			start := time.Now()
			for i := range n {
				if err := each(i); err != nil {
					b.Fatalf("%s %d: %v", name, i, err)
				}
			}
			b.ReportMetric(float64(n)/time.Since(start).Seconds(), name+"/s")
		}
		table := func(i int) string { return fmt.Sprintf("Table%06d", i) }
		phase("create", func(i int) error { _, err := s.CreateTable(ctx, "acct", table(i)); return err })
		start, listed, next := time.Now(), 0, ""
		for {
			page, err := s.QueryTables(ctx, "acct", store.TableQuery{Top: 1000, After: next})
			if err != nil {
				b.Fatal(err)
			}
			listed += len(page.Tables)
			if next = page.Next; next == "" {
				break
			}
		}
		if listed != n {
			b.Fatalf("listed %d of %d tables", listed, n)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "list/s")
		phase("insert", func(i int) error {
			return s.Write(ctx, "acct", table(i), []store.Op{{Kind: store.OpInsert, Entity: newEntity("p", "r", benchProps(i))}})
		})
		phase("query", func(i int) error {
			page, err := s.QueryEntities(ctx, "acct", table(i), store.Query{Top: 10})
			if err == nil && len(page.Entities) != 1 {
				err = fmt.Errorf("%d entities", len(page.Entities))
			}
			return err
		})
		phase("delete", func(i int) error { return s.DeleteTable(ctx, "acct", table(i)) })
		start = time.Now()
		pctx, cancel := context.WithTimeout(ctx, *benchPurgeFor)
		rep, err := s.Purge(pctx)
		cancel()
		if err != nil || rep.Tables+rep.Pending != n || rep.Items < rep.Tables {
			b.Fatalf("Purge = %+v, %v", rep, err)
		}
		b.ReportMetric(float64(rep.Tables)/time.Since(start).Seconds(), "purged-tables/s")
	}
}

// BenchmarkPurge measures the purge's rate on one table of -bench.tables x
// 100 entities, -bench.perpartition to a PartitionKey (5: a table spread
// over partitions, as Azure advises), unthrottled (PurgeRate far above
// what DynamoDB Local takes; PurgeKeyRate at its default).
func BenchmarkPurge(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		env := newEnv(b, newTestStoreWith(b, Options{PurgeGrace: time.Millisecond, PurgeRate: 1_000_000}))
		n := *benchTables * 100
		per := *benchPerPartition
		for i := 0; i < n; i += per {
			var ops []store.Op
			for j := range min(per, n-i) {
				ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity(fmt.Sprintf("p%d", i/per), fmt.Sprintf("r%d", j), benchProps(i+j))})
				if len(ops) == 100 {
					env.mustWrite(ops...)
					ops = nil
				}
			}
			if len(ops) > 0 {
				env.mustWrite(ops...)
			}
		}
		if err := env.s.DeleteTable(env.ctx, env.account, env.table); err != nil {
			b.Fatal(err)
		}
		time.Sleep(env.s.recreateDelay()) // past PurgeGrace, and the tombstone may go
		b.StartTimer()
		start := time.Now()
		rep, err := env.s.Purge(env.ctx)
		if err != nil || rep.Items != n {
			b.Fatalf("Purge = %+v, %v", rep, err)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "items/s")
	}
}
