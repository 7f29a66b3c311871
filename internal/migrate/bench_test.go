package migrate_test

import (
	"flag"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

var benchEntities = flag.Int("migrate.entities", 100000, "entities BenchmarkMigrate copies")

// BenchmarkMigrate copies 100,000 entities (100 partitions of 1,000, seven
// typed properties each) from a tablebridge endpoint (the real handler over
// bbolt, on loopback) to another endpoint and straight into a bolt store,
// and reports entities/s. It sets GOGC=400 as the tablebridge commands do.
// Run it with
//
//	go test ./internal/migrate -run '^$' -bench Migrate -benchtime 1x
func BenchmarkMigrate(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	src := protocoltest.New(b)
	seed(b, src.Store, "Bench", bulkEntities(*benchEntities, 100))
	run := func(b *testing.B, dest func(b *testing.B) migrate.Dest) {
		var total time.Duration
		for range b.N {
			b.StopTimer()
			d := dest(b)
			source := openEndpoint(b, src.ConnectionString())
			b.StartTimer()
			start := time.Now()
			res, err := migrate.Migrate(ctxFor(b), migrate.Options{Source: source, Dest: d})
			if err != nil {
				b.Fatal(err)
			}
			total += time.Since(start)
			if res.Entities != int64(*benchEntities) {
				b.Fatalf("copied %d entities, want %d", res.Entities, *benchEntities)
			}
		}
		b.ReportMetric(float64(*benchEntities*b.N)/total.Seconds(), "entities/s")
	}
	b.Run("endpoint-to-endpoint", func(b *testing.B) {
		run(b, func(b *testing.B) migrate.Dest { return openEndpoint(b, protocoltest.New(b).ConnectionString()) })
	})
	b.Run("endpoint-to-bolt", func(b *testing.B) {
		run(b, func(b *testing.B) migrate.Dest { return storeIO(b, openBolt(b)) })
	})
}
