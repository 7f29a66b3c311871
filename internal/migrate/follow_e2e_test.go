package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/azurite"
	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// liveWriter drives a source table the way an application would, through
// the official SDK: inserts, merges, replaces and deletes, from several
// goroutines over a small key space, so that keys change several times
// within a pass and are deleted and inserted again.
type liveWriter struct {
	t  testing.TB
	tc *aztables.Client
	// partitions x rows keys are written at random.
	partitions, rows int
}

// The keys the random writer never touches: seeded before the bulk copy,
// then deleted (or deleted and inserted again) after the first pass, so a
// key comparison must find them.
const (
	goneKeys     = 10 // deleted after the first pass
	returnedKeys = 10 // deleted and inserted again after the first pass
)

func (w *liveWriter) entity(pk, rk string, n int) []byte {
	e := &model.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]edm.Value{
		"N":     edm.NewInt64(int64(n)),
		"Text":  edm.NewString(fmt.Sprintf("version %d of %s/%s", n, pk, rk)),
		"Ratio": edm.NewDouble(float64(n) / 7),
	}}
	return migrate.AppendEntityJSON(nil, e, false)
}

// seed writes every random key once, and the fixed keys.
func (w *liveWriter) seed(ctx context.Context) {
	if _, err := w.tc.CreateTable(ctx, nil); err != nil {
		w.t.Fatal(err)
	}
	for p := range w.partitions {
		for r := range w.rows {
			w.must(w.tc.UpsertEntity(ctx, w.entity(fmt.Sprintf("p%d", p), fmt.Sprintf("r%03d", r), 0), nil))
		}
	}
	for i := range goneKeys {
		w.must(w.tc.UpsertEntity(ctx, w.entity("gone", fmt.Sprintf("g%02d", i), 0), nil))
	}
	for i := range returnedKeys {
		w.must(w.tc.UpsertEntity(ctx, w.entity("returned", fmt.Sprintf("r%02d", i), 0), nil))
	}
}

func (w *liveWriter) must(_ any, err error) {
	w.t.Helper()
	if err != nil {
		w.t.Error(err)
	}
}

// tolerate passes the answers a racing writer expects: 404 for a delete or
// update of a key another goroutine deleted, 409 for an insert of a key
// another inserted.
func tolerate(err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) && (re.StatusCode == http.StatusNotFound || re.StatusCode == http.StatusConflict) {
		return nil
	}
	return err
}

// run performs ops random operations from each of workers goroutines.
func (w *liveWriter) run(ctx context.Context, workers, ops int) {
	var wg sync.WaitGroup
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 26))
			for i := range ops {
				pk := fmt.Sprintf("p%d", rng.IntN(w.partitions))
				rk := fmt.Sprintf("r%03d", rng.IntN(w.rows))
				n := g*ops + i + 1
				var err error
				switch rng.IntN(6) {
				case 0:
					_, err = w.tc.AddEntity(ctx, w.entity(pk, rk, n), nil)
				case 1:
					// Merge adds a property the others lack.
					body := fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":%q,"N":"%d","N@odata.type":"Edm.Int64","Merged%d":true}`, pk, rk, n, n%3)
					_, err = w.tc.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge})
				case 2:
					_, err = w.tc.UpsertEntity(ctx, w.entity(pk, rk, n), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
				case 3:
					_, err = w.tc.UpdateEntity(ctx, w.entity(pk, rk, n), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: to.Ptr(azcore.ETagAny)})
				case 4:
					_, err = w.tc.DeleteEntity(ctx, pk, rk, &aztables.DeleteEntityOptions{IfMatch: to.Ptr(azcore.ETagAny)})
				case 5:
					// Deleted and inserted again at once.
					_, err = w.tc.DeleteEntity(ctx, pk, rk, &aztables.DeleteEntityOptions{IfMatch: to.Ptr(azcore.ETagAny)})
					if tolerate(err) == nil {
						_, err = w.tc.AddEntity(ctx, w.entity(pk, rk, n), nil)
					}
				}
				if err = tolerate(err); err != nil {
					w.t.Errorf("writer %d op %d: %v", g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// deleteFixed deletes the gone keys and deletes and inserts again the
// returned ones.
func (w *liveWriter) deleteFixed(ctx context.Context) {
	for i := range goneKeys {
		w.must(w.tc.DeleteEntity(ctx, "gone", fmt.Sprintf("g%02d", i), nil))
	}
	for i := range returnedKeys {
		rk := fmt.Sprintf("r%02d", i)
		w.must(w.tc.DeleteEntity(ctx, "returned", rk, nil))
		w.must(w.tc.AddEntity(ctx, w.entity("returned", rk, 1), nil))
	}
}

// followRun is one Migrate with Follow in the background.
type followRun struct {
	stop    chan struct{}
	done    chan struct{}
	res     *migrate.Result
	err     error
	mu      sync.Mutex
	reports []migrate.PassReport
	passed  chan struct{} // closed after the first pass
}

func startFollow(ctx context.Context, opts migrate.Options) *followRun {
	r := &followRun{stop: make(chan struct{}), done: make(chan struct{}), passed: make(chan struct{})}
	var once sync.Once
	opts.Follow.Stop = r.stop
	opts.Follow.Report = func(p migrate.PassReport) {
		r.mu.Lock()
		r.reports = append(r.reports, p)
		r.mu.Unlock()
		once.Do(func() { close(r.passed) })
	}
	go func() {
		defer close(r.done)
		r.res, r.err = migrate.Migrate(ctx, opts)
	}()
	return r
}

// finish stops the follow and waits for its final pass; at least
// minPasses must have run.
func (r *followRun) finish(t testing.TB, minPasses int) *migrate.Result {
	t.Helper()
	close(r.stop)
	<-r.done
	if r.err != nil {
		t.Fatalf("Migrate -follow: %v", r.err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.reports); n < minPasses || !r.reports[n-1].Final || !r.reports[n-1].Swept {
		t.Fatalf("passes %+v: want at least %d, the last final and swept", r.reports, minPasses)
	}
	return r.res
}

// testFollow follows a table of the source (a connection string) into dest
// while a bounded writer changes it, then checks that the final pass left
// an exact copy, and that a second follow resumes from the checkpoint.
func testFollow(t *testing.T, sourceCS string, dest func(t *testing.T) migrate.Dest) {
	ctx := ctxFor(t)
	table := fmt.Sprintf("Live%d", tableCounter.Add(1))
	svc, err := aztables.NewServiceClientFromConnectionString(sourceCS, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &liveWriter{t: t, tc: svc.NewClient(table), partitions: 4, rows: 50}
	w.seed(ctx)
	src := openEndpoint(t, sourceCS)
	dst := dest(t)
	checkpoint := filepath.Join(t.TempDir(), "follow.json")
	opts := migrate.Options{
		Source: src, Dest: dst, Tables: []string{table}, Checkpoint: checkpoint,
		Ranges: 2, PageSize: 100, Backoff: fastBackoff,
		Follow: &migrate.FollowOptions{
			Interval: 10 * time.Millisecond,
			// Source and destination share this machine's clock, and
			// Azurite and tablebridge make a write visible as they
			// stamp it: a short margin is safe and keeps passes small.
			Margin:     2 * time.Second,
			SweepEvery: 3,
		},
	}
	run := startFollow(ctx, opts)
	// Writes race the bulk copy, then the passes.
	w.run(ctx, 4, 250)
	select {
	case <-run.passed:
	case <-run.done:
		t.Fatalf("Migrate -follow ended early: %v", run.err)
	}
	w.deleteFixed(ctx)
	w.run(ctx, 4, 250)
	res := run.finish(t, 2)
	if got := res.Tables[0].Deleted; got < goneKeys {
		t.Errorf("deleted %d entities, want at least the %d deleted after the first pass", got, goneKeys)
	}
	verifyClean(t, migrate.VerifyOptions{Source: src, Dest: dst.(migrate.Source), Tables: []string{table}})

	cp, err := migrate.LoadCheckpoint(checkpoint)
	if err != nil || cp == nil || len(cp.Tables) != 1 || cp.Tables[0].Follow == nil {
		t.Fatalf("checkpoint %+v, %v: want the table's follow position", cp, err)
	}
	before := *cp.Tables[0].Follow
	if before.Passes != res.Passes || before.PassesSinceSweep != 0 || before.Since.IsZero() {
		t.Errorf("follow position %+v after %d passes ending with a sweep", before, res.Passes)
	}

	t.Run("resumes from the checkpoint", func(t *testing.T) {
		w.t = t
		w.run(ctx, 2, 50)
		run := startFollow(ctx, opts)
		res := run.finish(t, 1)
		if !res.Tables[0].AlreadyDone {
			t.Errorf("the bulk copy ran again: %+v", res.Tables[0])
		}
		cp, err := migrate.LoadCheckpoint(checkpoint)
		if err != nil {
			t.Fatal(err)
		}
		after := cp.Tables[0].Follow
		if after.Passes != before.Passes+res.Passes || !after.Since.After(before.Since) {
			t.Errorf("follow position %+v, was %+v, after %d more passes", after, before, res.Passes)
		}
		verifyClean(t, migrate.VerifyOptions{Source: src, Dest: dst.(migrate.Source), Tables: []string{table}})
	})
}

func TestFollowFromAzurite(t *testing.T) {
	t.Parallel()
	cs := azurite.ConnectionString(t)
	t.Run("to a bolt store", func(t *testing.T) {
		testFollow(t, cs, func(t *testing.T) migrate.Dest { return storeIO(t, openBolt(t)) })
	})
	t.Run("to DynamoDB", func(t *testing.T) {
		testFollow(t, cs, func(t *testing.T) migrate.Dest {
			client := dynamolocal.Client(t, func(o *dynamodb.Options) {})
			st, err := dynamostore.New(ctxFor(t), client, dynamostore.Options{TablePrefix: dynamolocal.UniqueName("follow"), Endpoint: dynamolocal.Endpoint(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return storeIO(t, st)
		})
	})
}

// A tablebridge endpoint as source and as destination: the Timestamp
// filter through tablebridge's own $filter, deletes through its REST API.
func TestFollowTablebridgeEndpoints(t *testing.T) {
	t.Parallel()
	src, dst := protocoltest.New(t), protocoltest.New(t)
	testFollow(t, src.ConnectionString(), func(t *testing.T) migrate.Dest { return openEndpoint(t, dst.ConnectionString()) })
}

func TestFollowRejects(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	seed(t, src.Store, "Orders", bulkEntities(10, 2))
	ep := openEndpoint(t, src.ConnectionString())
	for name, tc := range map[string]struct {
		opts migrate.Options
		want string
	}{
		"dry run":           {migrate.Options{Source: ep, DryRun: true, Follow: &migrate.FollowOptions{}}, "a dry run cannot follow"},
		"negative margin":   {migrate.Options{Source: ep, Dest: ep, Follow: &migrate.FollowOptions{Margin: -time.Second}}, "must not be negative"},
		"unreadable dest":   {migrate.Options{Source: ep, Dest: writeOnly{ep}, Follow: &migrate.FollowOptions{}}, "a destination it can read"},
		"negative interval": {migrate.Options{Source: ep, Dest: ep, Follow: &migrate.FollowOptions{Interval: -1}}, "must not be negative"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := migrate.Migrate(ctxFor(t), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
}

// writeOnly hides the destination's reads.
type writeOnly struct{ migrate.Dest }

// TestFollowStopDuringBulkCopy: Stop before the bulk copy is done
// interrupts it, as a cancelled context does, and the checkpoint resumes
// it; the follow then starts from the time the copy first began.
func TestFollowStopDuringBulkCopy(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	seed(t, src.Store, "Orders", bulkEntities(500, 5))
	dest := storeIO(t, openBolt(t))
	checkpoint := filepath.Join(t.TempDir(), "cp.json")
	stop := make(chan struct{})
	close(stop)
	opts := migrate.Options{Source: openEndpoint(t, src.ConnectionString()), Dest: dest, Checkpoint: checkpoint, Backoff: fastBackoff,
		Follow: &migrate.FollowOptions{Stop: stop}}
	if _, err := migrate.Migrate(ctxFor(t), opts); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err %v, want the bulk copy interrupted", err)
	}
	cp, err := migrate.LoadCheckpoint(checkpoint)
	if err != nil || cp == nil || cp.Tables[0].Done || cp.Tables[0].Started.IsZero() || cp.Tables[0].Follow != nil {
		t.Fatalf("checkpoint %+v, %v: want the table started, not done, not followed", cp, err)
	}
	started := cp.Tables[0].Started
	// Without Follow the copy completes; a follow after it starts from
	// the first run's start.
	opts.Follow = nil
	if _, err := migrate.Migrate(ctxFor(t), opts); err != nil {
		t.Fatal(err)
	}
	opts.Follow = &migrate.FollowOptions{Stop: stop}
	res, err := migrate.Migrate(ctxFor(t), opts)
	if err != nil || res.Passes != 1 || !res.Tables[0].AlreadyDone {
		t.Fatalf("%+v, %v: want one final pass after the finished copy", res, err)
	}
	if cp, _ = migrate.LoadCheckpoint(checkpoint); !cp.Tables[0].Started.Equal(started) || cp.Tables[0].Follow == nil {
		t.Errorf("checkpoint %+v: want Started %v kept and a follow position", cp.Tables[0], started)
	}
	verifyClean(t, migrate.VerifyOptions{Source: openEndpoint(t, src.ConnectionString()), Dest: dest})
}

// TestDestDelete: both destinations delete whatever the version, the empty
// PartitionKey and quotes included, and take an entity that is already
// gone as deleted.
func TestDestDelete(t *testing.T) {
	t.Parallel()
	srv := protocoltest.New(t)
	for name, dest := range map[string]migrate.Dest{
		"endpoint": openEndpoint(t, srv.ConnectionString()),
		"store":    storeIO(t, openBolt(t)),
	} {
		t.Run(name, func(t *testing.T) {
			ctx := ctxFor(t)
			table := fmt.Sprintf("Del%d", tableCounter.Add(1))
			if err := dest.EnsureTable(ctx, table); err != nil {
				t.Fatal(err)
			}
			keys := [][2]string{{"", "empty"}, {"it's", "o'clock"}, {"p", "r"}}
			for _, k := range keys {
				e := &model.Entity{PartitionKey: k[0], RowKey: k[1], Properties: map[string]edm.Value{"V": edm.NewInt32(1)}}
				if err := dest.Upsert(ctx, table, []*model.Entity{e}); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range keys {
				for range 2 { // the second time it is already gone
					if err := dest.Delete(ctx, table, k[0], k[1]); err != nil {
						t.Fatalf("delete (%q, %q): %v", k[0], k[1], err)
					}
				}
			}
			page, err := dest.(migrate.Source).ReadPage(ctx, table, migrate.PageRequest{Top: 10})
			if err != nil || len(page.Entities) != 0 {
				t.Fatalf("left %d entities, %v", len(page.Entities), err)
			}
		})
	}
}
