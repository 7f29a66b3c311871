package migrate_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// pageLog records every page a source served, per table and range, so a
// test can tell which entities lie before a checkpointed continuation.
type pageLog struct {
	migrate.Source
	mu    sync.Mutex
	pages map[string]map[string]servedPage // table/range -> after -> page
	// onPage, when set, runs after each copy page is served.
	onPage func(n int)
	n      atomic.Int64
}

type servedPage struct {
	keys []string
	next string
}

func token(c *migrate.Continuation) string {
	if c == nil {
		return ""
	}
	b, _ := json.Marshal(c)
	return string(b)
}

func rangeKey(table string, r migrate.Range) string { return table + "/" + r.Lower }

func (l *pageLog) ReadPage(ctx context.Context, table string, req migrate.PageRequest) (migrate.Page, error) {
	page, err := l.Source.ReadPage(ctx, table, req)
	if err != nil || req.KeysOnly {
		return page, err
	}
	sp := servedPage{next: token(page.Next)}
	for _, e := range page.Entities {
		sp.keys = append(sp.keys, e.PartitionKey+"\x00"+e.RowKey)
	}
	l.mu.Lock()
	if l.pages == nil {
		l.pages = map[string]map[string]servedPage{}
	}
	rk := rangeKey(table, req.Range)
	if l.pages[rk] == nil {
		l.pages[rk] = map[string]servedPage{}
	}
	l.pages[rk][token(req.After)] = sp
	l.mu.Unlock()
	if l.onPage != nil {
		l.onPage(int(l.n.Add(1)))
	}
	return page, nil
}

// before returns the keys of the pages of a range up to the one whose Next
// is next: what the checkpoint claims is written.
func (l *pageLog) before(t *testing.T, table string, r *migrate.RangeState) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	want := token(r.Next)
	var keys []string
	after := ""
	for steps := 0; ; steps++ {
		if r.Next == nil && !r.Done {
			return nil // nothing acknowledged yet
		}
		sp, ok := l.pages[rangeKey(table, r.Range)][after]
		if !ok {
			t.Fatalf("%s %v: the checkpoint's continuation %s was never served", table, r.Range, want)
		}
		keys = append(keys, sp.keys...)
		if sp.next == want {
			return keys
		}
		after = sp.next
		if steps > 10000 {
			t.Fatal("page chain does not end")
		}
	}
}

// cancellingDest cancels the run after a number of successful upserts, so
// the run stops in the middle of a page's transactions.
type cancellingDest struct {
	migrate.Dest
	after  int64
	n      atomic.Int64
	cancel context.CancelFunc
	mu     sync.Mutex
	wrote  map[string]bool
}

func (d *cancellingDest) Upsert(ctx context.Context, table string, entities []*model.Entity) error {
	if err := d.Dest.Upsert(ctx, table, entities); err != nil {
		return err
	}
	d.mu.Lock()
	for _, e := range entities {
		d.wrote[table+"/"+e.PartitionKey+"\x00"+e.RowKey] = true
	}
	d.mu.Unlock()
	if d.n.Add(1) == d.after {
		d.cancel()
	}
	return nil
}

func TestMigrateResumesAfterInterruption(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	tables := map[string][]*model.Entity{
		"Orders": bulkEntities(3000, 30),
		"Users":  bulkEntities(300, 300),
		"Edges":  edgeEntities(t),
	}
	total := 0
	for name, es := range tables {
		seed(t, src.Store, name, es)
		total += len(es)
	}
	dst := protocoltest.New(t)
	cp := filepath.Join(t.TempDir(), "cp.json")
	log := &pageLog{Source: openEndpoint(t, src.ConnectionString())}
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	dest := &cancellingDest{Dest: openEndpoint(t, dst.ConnectionString()), after: 120, cancel: cancel, wrote: map[string]bool{}}
	opts := migrate.Options{
		Source:     log,
		Dest:       dest,
		Checkpoint: cp,
		PageSize:   100,
		Ranges:     4,
		Writers:    4,
		Parallel:   3,
		Backoff:    fastBackoff,
	}
	_, err := migrate.Migrate(ctx, opts)
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted Migrate = %v, want context.Canceled", err)
	}

	c, err := migrate.LoadCheckpoint(cp)
	if err != nil || c == nil {
		t.Fatalf("checkpoint after the interruption: %v, %v", c, err)
	}
	var acknowledged int64
	t.Run("the checkpoint claims only acknowledged writes", func(t *testing.T) {
		for _, tbl := range c.Tables {
			for _, r := range tbl.Ranges {
				keys := log.before(t, tbl.Source, r)
				if int64(len(keys)) != r.Copied {
					t.Errorf("%s %v: Copied = %d, but the pages before its continuation hold %d", tbl.Source, r.Range, r.Copied, len(keys))
				}
				for _, k := range keys {
					if !dest.wrote[tbl.Dest+"/"+k] {
						t.Fatalf("%s: the checkpoint is past %q, which was never acknowledged", tbl.Source, k)
					}
				}
				acknowledged += r.Copied
			}
		}
		if acknowledged == 0 || acknowledged >= int64(total) {
			t.Fatalf("the checkpoint holds %d of %d entities; the test wants an interruption midway", acknowledged, total)
		}
	})

	// Resume with a fresh context and an honest destination.
	opts.Dest = openEndpoint(t, dst.ConnectionString())
	res, err := migrate.Migrate(ctxFor(t), opts)
	if err != nil {
		t.Fatalf("resumed Migrate: %v", err)
	}
	var resumed int64
	for _, tr := range res.Tables {
		resumed += tr.Resumed
	}
	if resumed != acknowledged || res.Entities+resumed != int64(total) {
		t.Errorf("resumed run: %d copied + %d resumed, want %d + %d = %d", res.Entities, resumed, int64(total)-acknowledged, acknowledged, total)
	}
	for name, want := range tables {
		assertSameEntities(t, name, want, readAll(t, dst.Store, name))
	}
	verifyClean(t, migrate.VerifyOptions{Source: log.Source, Dest: openEndpoint(t, dst.ConnectionString())})
}

func TestMigrateResumesAfterInterruptedDiscovery(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	want := bulkEntities(2000, 20)
	seed(t, src.Store, "Orders", want)
	dst := protocoltest.New(t)
	cp := filepath.Join(t.TempDir(), "cp.json")
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	stopper := &discoveryStopper{Source: openEndpoint(t, src.ConnectionString()), cancel: cancel}
	opts := migrate.Options{Source: stopper, Dest: openEndpoint(t, dst.ConnectionString()), Checkpoint: cp, PageSize: 100}
	if _, err := migrate.Migrate(ctx, opts); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	c, err := migrate.LoadCheckpoint(cp)
	if err != nil || c == nil || len(c.Tables) != 1 || len(c.Tables[0].Ranges) != 0 {
		t.Fatalf("checkpoint = %+v, %v; want the table planned, not yet split", c, err)
	}
	opts.Source = stopper.Source
	if _, err := migrate.Migrate(ctxFor(t), opts); err != nil {
		t.Fatal(err)
	}
	assertSameEntities(t, "Orders", want, readAll(t, dst.Store, "Orders"))
}

// discoveryStopper cancels the run on the second keys-only page.
type discoveryStopper struct {
	migrate.Source
	cancel context.CancelFunc
	n      atomic.Int64
}

func (d *discoveryStopper) ReadPage(ctx context.Context, table string, req migrate.PageRequest) (migrate.Page, error) {
	if req.KeysOnly && d.n.Add(1) == 2 {
		d.cancel()
	}
	return d.Source.ReadPage(ctx, table, req)
}

// flakyDest fails some upserts: transiently (ErrBusy) or for good.
type flakyDest struct {
	migrate.Dest
	n         atomic.Int64
	failEvery int64
	permanent bool
}

func (d *flakyDest) Upsert(ctx context.Context, table string, entities []*model.Entity) error {
	if n := d.n.Add(1); n%d.failEvery == 0 {
		if d.permanent {
			return fmt.Errorf("op 3: %w", store.ErrEntityTooLarge)
		}
		return fmt.Errorf("throttled: %w", store.ErrBusy)
	}
	return d.Dest.Upsert(ctx, table, entities)
}

func TestMigrateWriteFailures(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	want := bulkEntities(1000, 10)
	seed(t, src.Store, "Orders", want)
	t.Run("transient failures are retried", func(t *testing.T) {
		dst := protocoltest.New(t)
		d := &flakyDest{Dest: openEndpoint(t, dst.ConnectionString()), failEvery: 3}
		_, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: openEndpoint(t, src.ConnectionString()), Dest: d, PageSize: 100, Backoff: fastBackoff})
		if err != nil {
			t.Fatal(err)
		}
		assertSameEntities(t, "Orders", want, readAll(t, dst.Store, "Orders"))
	})
	t.Run("a permanent failure stops the run and the checkpoint", func(t *testing.T) {
		dst := protocoltest.New(t)
		cp := filepath.Join(t.TempDir(), "cp.json")
		d := &flakyDest{Dest: openEndpoint(t, dst.ConnectionString()), failEvery: 5, permanent: true}
		_, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: openEndpoint(t, src.ConnectionString()), Dest: d, PageSize: 100, Writers: 1, Parallel: 1, Checkpoint: cp, Backoff: fastBackoff})
		if !errors.Is(err, store.ErrEntityTooLarge) || !strings.Contains(err.Error(), "Orders") {
			t.Fatalf("err = %v, want ErrEntityTooLarge naming the table", err)
		}
		if calls := d.n.Load(); calls != 5 {
			t.Errorf("%d upserts, want the run to stop at the failing 5th", calls)
		}
		c, _ := migrate.LoadCheckpoint(cp)
		if c == nil || c.Tables[0].Done || c.Tables[0].Copied() >= 1000 {
			t.Fatalf("checkpoint = %+v, want the table unfinished", c)
		}
	})
}

// contextCancelledAfterPages returns a context that log cancels once it has
// served n copy pages.
func contextCancelledAfterPages(ctx context.Context, log *pageLog, n int) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	log.onPage = func(served int) {
		if served == n {
			cancel()
		}
	}
	return ctx, cancel
}
