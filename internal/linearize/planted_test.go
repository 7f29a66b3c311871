package linearize_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// The planted bugs: stores that break one of Azure's promises, each in a
// way no single-scenario test of this repository would notice unless it
// was written for that bug. The checker must find each one from the
// histories alone.

// ignoresIfMatch compares no ETag: a write with If-Match on an ETag only
// needs the entity to exist, as with If-Match: *.
type ignoresIfMatch struct{ store.Store }

func (s ignoresIfMatch) Write(ctx context.Context, account, table string, ops []store.Op) error {
	for i := range ops {
		if ops[i].Cond == store.CondTimestamp {
			ops[i].Cond = store.CondExists
		}
	}
	return s.Store.Write(ctx, account, table, ops)
}

// batchInSteps applies a batch one operation at a time, and leaves the
// operations before a failing one applied.
type batchInSteps struct{ store.Store }

func (s batchInSteps) Write(ctx context.Context, account, table string, ops []store.Op) error {
	for i, op := range ops {
		if i > 0 {
			time.Sleep(time.Millisecond) // a reader may come between the steps
		}
		if err := s.Store.Write(ctx, account, table, []store.Op{op}); err != nil {
			var opErr *store.OpError
			if errors.As(err, &opErr) {
				opErr.Index = i
			}
			return err
		}
	}
	return nil
}

// busyAfterWriting applies every tenth write and then answers that the
// backend was busy: a 503, which tells the client nothing was done.
type busyAfterWriting struct {
	store.Store
	writes *atomic.Int64
}

func (s busyAfterWriting) Write(ctx context.Context, account, table string, ops []store.Op) error {
	err := s.Store.Write(ctx, account, table, ops)
	if err == nil && s.writes.Add(1)%10 == 0 {
		return store.ErrBusy
	}
	return err
}

// TestPlantedBugsAreCaught runs the workload over each planted bug and
// asserts that the checker finds a history no order explains within a
// few histories, and that the failure's report (the shortest failing
// history and its Porcupine view) is written.
func TestPlantedBugsAreCaught(t *testing.T) {
	t.Parallel()
	var writes atomic.Int64
	for _, tc := range []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"ignores If-Match", func(s store.Store) store.Store { return ignoresIfMatch{s} }},
		{"batch in steps", func(s store.Store) store.Store { return batchInSteps{s} }},
		{"503 after writing", func(s store.Store) store.Store { return busyAfterWriting{s, &writes} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, err := memstore.New()
			if err != nil {
				t.Fatal(err)
			}
			srv := tablebridgetest.NewServer(t, tablebridgetest.WithStore(tc.wrap(mem)))
			const tries = 20
			for seed := uint64(1); seed <= tries; seed++ {
				cfg := linearize.Config{Name: "planted", Partitions: 1 + 2*int(seed%2)}
				h, err := linearize.Run(t.Context(), cfg, seed, srv.Client())
				if err != nil {
					t.Fatal(err)
				}
				r := linearize.Check(h, linearize.CheckTimeout)
				if r.Result == porcupine.Ok {
					continue
				}
				if r.Result != porcupine.Illegal {
					t.Fatalf("seed %d: the check ended %v", seed, r.Result)
				}
				short := linearize.Shrink(h, time.Minute)
				if linearize.Check(short, linearize.CheckTimeout).Result != porcupine.Illegal {
					t.Fatalf("seed %d: the shrunk history (%d operations) is linearizable", seed, len(short.Ops))
				}
				view := filepath.Join(t.TempDir(), "short.html")
				if err := linearize.Visualize(short, view); err != nil {
					t.Fatal(err)
				}
				if b, err := os.ReadFile(view); err != nil || !strings.Contains(string(b), "<html") {
					t.Fatalf("the Porcupine view %s was not written: %v", view, err)
				}
				t.Logf("seed %d: caught in a history of %d operations, shrunk to %d:", seed, len(h.Ops), len(short.Ops))
				for _, op := range short.Ops {
					t.Logf("  %v", &op)
				}
				return
			}
			t.Fatalf("%d histories over the planted bug, and the checker found nothing", tries)
		})
	}
}
