package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// The benchmarks of a durable store, the same for each engine so that
// their figures compare (docs/performance.md). Each takes a store opened
// as serve opens it, and creates its own table in it.

// benchClients is the concurrency of the performance targets: 16 clients.
const benchClients = 16

// benchEntity is a typical small entity: a handful of typed properties,
// about 200 bytes encoded.
func benchEntity(pk, rk string, i int) *model.Entity {
	return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: time.Unix(1_700_000_000, int64(i)*100).UTC(), Properties: props{
		"Name":    edm.NewString(fmt.Sprintf("customer %d", i)),
		"Email":   edm.NewString(fmt.Sprintf("customer%d@example.com", i)),
		"Age":     edm.NewInt32(int32(i % 100)),
		"Balance": edm.NewDouble(float64(i) * 1.25),
		"Joined":  edm.NewDateTime(time.Unix(int64(i), 0)),
		"Active":  edm.NewBoolean(i%2 == 0),
		"ID":      edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"),
	}}
}

// benchTable creates the benchmarks' table.
func benchTable(b *testing.B, s store.Store) context.Context {
	ctx := context.Background()
	if _, err := s.CreateTable(ctx, "acct", "tbl"); err != nil {
		b.Fatal(err)
	}
	return ctx
}

// runClients runs body with benchClients goroutines, each with its own
// random source.
func runClients(b *testing.B, body func(pb *testing.PB, rng *rand.Rand)) {
	b.SetParallelism(max(1, benchClients/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) { body(pb, rand.New(rand.NewPCG(rand.Uint64(), 1))) })
}

// BenchInsertParallel measures durable inserts from 16 concurrent clients,
// each acknowledged only once the sync that covers it is done.
func BenchInsertParallel(b *testing.B, s store.Store) {
	ctx := benchTable(b, s)
	var seq atomic.Int64
	runClients(b, func(pb *testing.PB, _ *rand.Rand) {
		for pb.Next() {
			i := int(seq.Add(1))
			e := benchEntity(fmt.Sprintf("p%03d", i%100), fmt.Sprintf("r%09d", i), i)
			if err := s.Write(ctx, "acct", "tbl", []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
}

// BenchInsertSerial measures one client alone: the latency of a sync, and
// of any delay a store adds to gather a group, when there is no one to
// share a commit with.
func BenchInsertSerial(b *testing.B, s store.Store) {
	ctx := benchTable(b, s)
	for i := 0; b.Loop(); i++ {
		e := benchEntity("p", fmt.Sprintf("r%09d", i), i)
		if err := s.Write(ctx, "acct", "tbl", []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inserts/s")
}

// BenchGet measures point reads from 16 concurrent clients over 100,000
// entities in 100 partitions.
func BenchGet(b *testing.B, s store.Store) {
	const partitions, perPartition = 100, 1000
	ctx := benchTable(b, s)
	for p := range partitions {
		ops := make([]store.Op, perPartition)
		for r := range perPartition {
			ops[r] = store.Op{Kind: store.OpInsert, Entity: benchEntity(fmt.Sprintf("p%03d", p), fmt.Sprintf("r%04d", r), p*perPartition+r)}
		}
		if err := s.Write(ctx, "acct", "tbl", ops); err != nil {
			b.Fatal(err)
		}
	}
	runClients(b, func(pb *testing.PB, rng *rand.Rand) {
		for pb.Next() {
			pk, rk := fmt.Sprintf("p%03d", rng.IntN(partitions)), fmt.Sprintf("r%04d", rng.IntN(perPartition))
			if _, err := s.GetEntity(ctx, "acct", "tbl", pk, rk); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "gets/s")
}

// BenchScanPartition measures rows scanned per second by a partition query
// of 10,000 entities paged 1,000 at a time, with a Match that reads a
// property, as a $filter does.
func BenchScanPartition(b *testing.B, s store.Store) {
	const rows = 10_000
	ctx := benchTable(b, s)
	for start := 0; start < rows; start += 1000 {
		ops := make([]store.Op, 0, 1000)
		for i := start; i < start+1000; i++ {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: benchEntity("part", fmt.Sprintf("r%06d", i), i)})
		}
		if err := s.Write(ctx, "acct", "tbl", ops); err != nil {
			b.Fatal(err)
		}
	}
	bound := &model.Bound{Value: "part", Inclusive: true}
	keys := model.KeyRange{PartitionKey: model.Bounds{Lower: bound, Upper: bound}}
	match := func(e *model.Entity) bool { return e.PartitionKey == "part" && e.Properties["Age"].Int >= 0 }
	scanned := 0
	for b.Loop() {
		q := store.Query{Keys: keys, Match: match, Top: 1000}
		for {
			page, err := s.QueryEntities(ctx, "acct", "tbl", q)
			if err != nil {
				b.Fatal(err)
			}
			scanned += len(page.Entities)
			if page.Next == nil {
				break
			}
			q.After = page.Next
		}
	}
	if scanned != rows*b.N {
		b.Fatalf("scanned %d rows; want %d", scanned, rows*b.N)
	}
	b.ReportMetric(float64(scanned)/b.Elapsed().Seconds(), "rows/s")
}
