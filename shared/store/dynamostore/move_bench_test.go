package dynamostore

import (
	"flag"
	"fmt"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

// benchMoveItems is how many entities BenchmarkMoveToShared moves;
// docs/dynamodb.md's figures are for 20,000:
//
//	go test -run '^$' -bench MoveToShared -benchtime 1x ./shared/store/dynamostore -args -bench.moveitems 20000
var benchMoveItems = flag.Int("bench.moveitems", 5000, "entities BenchmarkMoveToShared moves")

// BenchmarkMoveToShared measures the move of one placement of
// -bench.moveitems entities, 5 to a PartitionKey (a table spread over
// partitions), into the shared table, with -settle cut to a millisecond:
// what is left is the copy and its verification, the part of the freeze
// that grows with the table. The rate is unbounded (far above what
// DynamoDB Local takes).
func BenchmarkMoveToShared(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		old := newTestStore(b)
		ctx := dynamolocal.Context(b, time.Hour)
		createPlacement(b, old, "acct", "Moved", true)
		n := *benchMoveItems
		for i := 0; i < n; i += 5 {
			var ops []store.Op
			for j := range min(5, n-i) {
				ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity(fmt.Sprintf("p%d", i/5), fmt.Sprintf("r%d", j), benchProps(i+j))})
			}
			if err := old.Write(ctx, "acct", "Moved", ops); err != nil {
				b.Fatal(err)
			}
		}
		opts := old.opts
		opts.MoveSettle = time.Millisecond
		s, err := New(ctx, old.db, opts)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		progress := &phases{}
		rep, err := s.MoveToShared(ctx, "acct", "Moved", CopyOptions{Rate: 1_000_000, Progress: progress})
		if err != nil || rep.Items != n {
			b.Fatalf("MoveToShared = %+v, %v; want %d items", rep, err, n)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "items/s")
		for _, phase := range []string{"copying", "verifying"} {
			took := progress.want(b, "Moved", phase, n)
			b.ReportMetric(float64(n)/took.Seconds(), phase+"-items/s")
		}
	}
}
