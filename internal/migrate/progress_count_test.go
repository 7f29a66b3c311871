package migrate_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/shared/model"
)

// keysOnlyReads is a Source that counts the keys-only reads of the count
// pass.
type keysOnlyReads struct {
	*migrate.StoreIO
	n atomic.Int64
}

func (s *keysOnlyReads) ReadPage(ctx context.Context, table string, req migrate.PageRequest) (migrate.Page, error) {
	if req.KeysOnly {
		s.n.Add(1)
	}
	return s.StoreIO.ReadPage(ctx, table, req)
}

// shownProgress is a Progress that shows something, as far as the engine
// can tell.
type shownProgress struct{ migrate.NoProgress }

// TestCountOnlyForShownProgress: export and verify count a table keys-only
// for the progress total, and only when progress is shown.
func TestCountOnlyForShownProgress(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t)
	sio := storeIO(t, openBolt(t))
	if err := sio.EnsureTable(ctx, "Counted"); err != nil {
		t.Fatal(err)
	}
	if err := sio.Upsert(ctx, "Counted", []*model.Entity{{PartitionKey: "p", RowKey: "r"}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name     string
		progress migrate.Progress
		counted  bool
	}{
		{"none", migrate.NoProgress{}, false},
		{"nil", nil, false},
		{"shown", shownProgress{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &keysOnlyReads{StoreIO: sio}
			if n, err := migrate.ExportTable(ctx, src, "Counted", io.Discard, migrate.Backoff{}, tt.progress); err != nil || n != 1 {
				t.Fatalf("export: %d, %v", n, err)
			}
			if got := src.n.Load() > 0; got != tt.counted {
				t.Errorf("export made %d keys-only reads, want counted=%v", src.n.Load(), tt.counted)
			}
			src.n.Store(0)
			dst := &keysOnlyReads{StoreIO: sio}
			res, err := migrate.Verify(ctx, migrate.VerifyOptions{Source: src, Dest: dst, Tables: []string{"Counted"}, Progress: tt.progress})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tables) != 1 || res.Tables[0].Differences != 0 || res.Tables[0].SourceEntities != 1 {
				t.Errorf("verify: %+v", res.Tables)
			}
			if got := src.n.Load() > 0 && dst.n.Load() > 0; got != tt.counted {
				t.Errorf("verify made %d and %d keys-only reads, want counted=%v", src.n.Load(), dst.n.Load(), tt.counted)
			}
		})
	}
}
