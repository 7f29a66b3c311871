package migrate_test

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/azurite"
	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/model"
)

var (
	followEntities = flag.Int("follow.entities", 100000, "entities in the source table of BenchmarkFollowCutover")
	followChanges  = flag.Int("follow.changes", 1000, "entities BenchmarkFollowCutover changes (and a tenth as many it deletes) before each final pass")
	followWriters  = flag.Int("follow.writers", 8, "goroutines writing the source in BenchmarkFollowLag")
	followFor      = flag.Duration("follow.for", 30*time.Second, "how long BenchmarkFollowLag writes")
	followMargin   = flag.Duration("follow.margin", 5*time.Second, "the follow margin of BenchmarkFollowCutover (see there)")
)

// azuriteTable fills a new Azurite table with n bulk entities, through the
// migration itself (from a tablebridge seeded directly), the fastest way in.
func azuriteTable(b *testing.B, n int) (*migrate.Endpoint, string) {
	cs := azurite.ConnectionString(b)
	table := fmt.Sprintf("Follow%d", tableCounter.Add(1))
	tb := protocoltest.New(b)
	seed(b, tb.Store, "Seed", bulkEntities(n, 100))
	az := openEndpoint(b, cs)
	_, err := migrate.Migrate(ctxFor(b), migrate.Options{Source: openEndpoint(b, tb.ConnectionString()), Dest: az, Rename: map[string]string{"Seed": table}})
	if err != nil {
		b.Fatal(err)
	}
	return az, table
}

// stoppedFollow is a follow whose Stop is already closed: after the bulk
// copy (or none, if the checkpoint says it is done) it runs one final pass.
func stoppedFollow(opts migrate.Options, report *migrate.PassReport) migrate.Options {
	stop := make(chan struct{})
	close(stop)
	opts.Follow = &migrate.FollowOptions{Stop: stop, Margin: *followMargin, Report: func(r migrate.PassReport) { *report = r }}
	return opts
}

// BenchmarkFollowCutover measures the downtime of a cutover: an Azurite
// table of -follow.entities entities is copied into a bolt store and
// followed; then, per iteration, -follow.changes entities are updated and a
// tenth as many deleted on the source (the application's last writes), and
// the timed part is what the application waits for: the final pass (the
// Timestamp query, the copy of the changes, the key comparison and the
// deletes) and then verify. Run it with
//
//	go test ./internal/migrate -run '^$' -bench FollowCutover -benchtime 3x
func BenchmarkFollowCutover(b *testing.B) {
	src, table := azuriteTable(b, *followEntities)
	dest := storeIO(b, openBolt(b))
	opts := migrate.Options{Source: src, Dest: dest, Tables: []string{table}, Checkpoint: filepath.Join(b.TempDir(), "cp.json")}
	// The bulk copy, then a pass: the follow before cutover. (A Stop
	// closed from the start would interrupt the bulk copy.)
	if _, err := migrate.Migrate(ctxFor(b), opts); err != nil {
		b.Fatal(err)
	}
	var rep migrate.PassReport
	if _, err := migrate.Migrate(ctxFor(b), stoppedFollow(opts, &rep)); err != nil {
		b.Fatal(err)
	}
	tc := src.Client().NewClient(table)
	var pass, verify time.Duration
	var copied, deleted int64
	for i := range b.N {
		b.StopTimer()
		ctx := ctxFor(b)
		for j := range *followChanges {
			e := bulkEntities(1, 1)[0] // the shape; keys below
			k := (i**followChanges + j*97) % *followEntities
			e.PartitionKey, e.RowKey = fmt.Sprintf("p%04d", k%100), fmt.Sprintf("r%07d", k)
			if _, err := tc.UpsertEntity(ctx, migrate.AppendEntityJSON(nil, e, false), nil); err != nil {
				b.Fatal(err)
			}
			if j%10 == 0 {
				k := (k + 1) % *followEntities
				if _, err := tc.DeleteEntity(ctx, fmt.Sprintf("p%04d", k%100), fmt.Sprintf("r%07d", k), nil); err != nil && tolerate(err) != nil {
					b.Fatal(err)
				}
			}
		}
		b.StartTimer()
		start := time.Now()
		if _, err := migrate.Migrate(ctx, stoppedFollow(opts, &rep)); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		res, err := migrate.Verify(ctx, migrate.VerifyOptions{Source: src, Dest: dest, Tables: []string{table}})
		if err != nil || res.Differences != 0 {
			b.Fatalf("verify: %v, %d differences", err, res.Differences)
		}
		pass += mid.Sub(start)
		verify += time.Since(mid)
		copied += rep.Copied
		deleted += rep.Deleted
	}
	n := float64(b.N)
	b.ReportMetric(pass.Seconds()/n, "s/final-pass")
	b.ReportMetric(verify.Seconds()/n, "s/verify")
	b.ReportMetric(float64(copied)/n, "copied/pass")
	b.ReportMetric(float64(deleted)/n, "deleted/pass")
}

// BenchmarkFollowLag measures the lag a follow holds against a busy source:
// -follow.writers goroutines replace entities of a 10,000-entity Azurite
// table as fast as Azurite takes them for -follow.for, while a follow (the
// default one-minute margin, a key comparison every 10 passes, 1 s between
// passes) copies them into a bolt store. It reports the write rate, and the
// mean and largest lag at the end of a pass, and verifies after the final
// pass. Run it with
//
//	go test ./internal/migrate -run '^$' -bench FollowLag -benchtime 1x
func BenchmarkFollowLag(b *testing.B) {
	const keys = 10000
	src, table := azuriteTable(b, keys)
	for range b.N {
		dest := storeIO(b, openBolt(b))
		stop := make(chan struct{})
		var (
			mu      sync.Mutex
			reports []migrate.PassReport
		)
		opts := migrate.Options{Source: src, Dest: dest, Tables: []string{table}, Follow: &migrate.FollowOptions{
			Stop: stop, Interval: time.Second,
			Report: func(r migrate.PassReport) { mu.Lock(); reports = append(reports, r); mu.Unlock() },
		}}
		done := make(chan error, 1)
		go func() { _, err := migrate.Migrate(ctxFor(b), opts); done <- err }()

		var writes atomic.Int64
		ctx, cancel := context.WithTimeout(ctxFor(b), *followFor)
		var wg sync.WaitGroup
		start := time.Now()
		for g := range *followWriters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tc := src.Client().NewClient(table)
				shape := bulkEntities(1, 1)[0]
				for i := 0; ctx.Err() == nil; i++ {
					k := (g*7919 + i*31) % keys
					e := &model.Entity{PartitionKey: fmt.Sprintf("p%04d", k%100), RowKey: fmt.Sprintf("r%07d", k), Properties: shape.Properties}
					_, err := tc.UpsertEntity(ctx, migrate.AppendEntityJSON(nil, e, false), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
					if err == nil {
						writes.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		cancel()
		mu.Lock()
		during := append([]migrate.PassReport(nil), reports...)
		mu.Unlock()
		close(stop)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		var sum, most time.Duration
		var counted int
		for _, r := range during {
			// Passes that began after the bulk copy and ended while
			// the writers wrote.
			if r.Ended.Sub(start) > elapsed {
				continue
			}
			sum += r.Lag
			most = max(most, r.Lag)
			counted++
		}
		if counted == 0 {
			b.Fatalf("no pass ended while the writers wrote (%d passes)", len(reports))
		}
		res, err := migrate.Verify(ctxFor(b), migrate.VerifyOptions{Source: src, Dest: dest, Tables: []string{table}})
		if err != nil || res.Differences != 0 {
			b.Fatalf("verify: %v, %d differences", err, res.Differences)
		}
		b.ReportMetric(float64(writes.Load())/elapsed.Seconds(), "writes/s")
		b.ReportMetric(sum.Seconds()/float64(counted), "s/mean-lag")
		b.ReportMetric(most.Seconds(), "s/max-lag")
		b.ReportMetric(float64(counted), "passes")
	}
}
