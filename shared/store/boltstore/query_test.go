package boltstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// fill inserts n entities into partition pk of a new table "tbl" in account
// "acct", RowKeys r0000, r0001, ..., in one transaction.
func fill(t testing.TB, s *Store, pk string, n int) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.CreateTable(ctx, "acct", "tbl"); err != nil && !errors.Is(err, store.ErrTableExists) {
		t.Fatal(err)
	}
	const chunk = 1000
	for start := 0; start < n; start += chunk {
		var ops []store.Op
		for i := start; i < min(n, start+chunk); i++ {
			e := entity(pk, fmt.Sprintf("r%04d", i), time.Unix(int64(i), 0), map[string]edm.Value{
				"N":    edm.NewInt32(int32(i)),
				"Name": edm.NewString(fmt.Sprintf("entity number %d", i)),
				"When": edm.NewDateTime(time.Unix(int64(i), 0)),
			})
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: e})
		}
		if err := s.Write(ctx, "acct", "tbl", ops); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPagesAreFullAndEndWithoutEmptyPage(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t)
	defer s.Close()
	fill(t, s, "p", 50)
	q := store.Query{Top: 7}
	var sizes []int
	for {
		page, err := s.QueryEntities(ctx, "acct", "tbl", q)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Entities))
		if page.Next == nil {
			break
		}
		q.After = page.Next
	}
	if want := "[7 7 7 7 7 7 7 1]"; fmt.Sprint(sizes) != want {
		t.Errorf("page sizes %v; want %s", sizes, want)
	}
	// Exactly Top left: the last page still ends with no continuation.
	page, err := s.QueryEntities(ctx, "acct", "tbl", store.Query{Top: 7, After: &store.Cursor{PartitionKey: "p", RowKey: "r0042"}})
	if err != nil || len(page.Entities) != 7 || page.Next != nil {
		t.Errorf("last 7 with Top 7 = %d entities, Next %+v, %v; want 7 and no continuation", len(page.Entities), page.Next, err)
	}
}

func TestScanBudget(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	none := func(*model.Entity) bool { return false }
	cases := []struct {
		name     string
		opts     []Option
		q        store.Query
		wantNext *store.Cursor
		wantLen  int
	}{
		{"RowsStopWithCursorAtLastExamined", []Option{WithScanBudget(10, time.Hour)},
			store.Query{Top: 5, Match: none}, &store.Cursor{PartitionKey: "p", RowKey: "r0009"}, 0},
		{"RowsCountMatchedAndNot", []Option{WithScanBudget(10, time.Hour)},
			store.Query{Top: 1000, Match: func(e *model.Entity) bool { return e.Properties["N"].Int%3 == 0 }},
			&store.Cursor{PartitionKey: "p", RowKey: "r0009"}, 4},
		{"TimeChecksEvery256Rows", []Option{WithScanBudget(1_000_000, time.Nanosecond)},
			store.Query{Top: 1000, Match: none}, &store.Cursor{PartitionKey: "p", RowKey: "r0255"}, 0},
		{"ExhaustedBeforeBudget", []Option{WithScanBudget(10_000, time.Hour)},
			store.Query{Top: 1000, Match: none}, nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _ := openTemp(t, c.opts...)
			defer s.Close()
			fill(t, s, "p", 600)
			page, err := s.QueryEntities(ctx, "acct", "tbl", c.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Entities) != c.wantLen {
				t.Errorf("%d entities; want %d", len(page.Entities), c.wantLen)
			}
			switch {
			case c.wantNext == nil && page.Next != nil:
				t.Errorf("Next = %+v; want none", *page.Next)
			case c.wantNext != nil && (page.Next == nil || *page.Next != *c.wantNext):
				t.Errorf("Next = %+v; want %+v", page.Next, *c.wantNext)
			}
		})
	}
}

// TestScanBudgetCountsSkippedPartitions: a RowKey range that no row of any
// partition meets still pages by the budget, with the cursor on a skipped
// key, instead of seeking through the whole table in one page.
func TestScanBudgetCountsSkippedPartitions(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t, WithScanBudget(10, time.Hour))
	defer s.Close()
	for i := range 30 {
		fill(t, s, fmt.Sprintf("p%02d", i), 3)
	}
	q := store.Query{Top: 1000, Keys: model.KeyRange{RowKey: model.Bounds{Upper: &model.Bound{Value: "r"}}}}
	var nexts []string
	for pages := 0; pages < 10; pages++ {
		page, err := s.QueryEntities(ctx, "acct", "tbl", q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 0 {
			t.Fatalf("%d entities outside the range", len(page.Entities))
		}
		if page.Next == nil {
			break
		}
		nexts = append(nexts, page.Next.PartitionKey+"/"+page.Next.RowKey)
		q.After = page.Next
	}
	// Ten keys per page; a page resuming inside a partition lands on its
	// next row first, which counts too.
	if want := "[p09/r0000 p18/r0000 p27/r0000]"; fmt.Sprint(nexts) != want {
		t.Errorf("continuations %v; want %s", nexts, want)
	}
}

func TestQueryHonoursContext(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, WithScanBudget(1_000_000, time.Hour))
	defer s.Close()
	fill(t, s, "p", 600)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.QueryEntities(ctx, "acct", "tbl", store.Query{Top: 1000}); !errors.Is(err, context.Canceled) {
		t.Errorf("QueryEntities with a canceled context = %v", err)
	}
	// Cancelled mid-scan: the check every 256 rows notices.
	ctx, cancel = context.WithCancel(context.Background())
	calls := 0
	match := func(*model.Entity) bool {
		if calls++; calls == 10 {
			cancel()
		}
		return false
	}
	if _, err := s.QueryEntities(ctx, "acct", "tbl", store.Query{Top: 1000, Match: match}); !errors.Is(err, context.Canceled) {
		t.Errorf("QueryEntities canceled mid-scan = %v", err)
	}
	if err := s.Write(ctx, "acct", "tbl", []store.Op{{Kind: store.OpInsert, Entity: entity("x", "y", time.Unix(0, 0), nil)}}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a canceled context = %v", err)
	}
}

func TestWriteRejectsMalformedOps(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t)
	defer s.Close()
	fill(t, s, "p", 1)
	ok := store.Op{Kind: store.OpInsert, Entity: entity("p", "new", time.Unix(1, 0), nil)}
	cases := []struct {
		name      string
		ops       []store.Op
		wantIndex int
		wantErr   error // besides *store.OpError; nil: any
	}{
		{"NilEntity", []store.Op{ok, {Kind: store.OpDelete}}, 1, nil},
		{"UnknownKind", []store.Op{{Kind: 9, Entity: entity("p", "x", time.Time{}, nil)}}, 0, nil},
		{"UnknownCondition", []store.Op{{Kind: store.OpReplace, Cond: 9, Entity: entity("p", "x", time.Time{}, nil)}}, 0, nil},
		{"InvalidEdmType", []store.Op{{Kind: store.OpInsert, Entity: entity("p", "x", time.Time{}, map[string]edm.Value{"X": {}})}}, 0, nil},
		{"SeparatorInPartitionKey", []store.Op{ok, {Kind: store.OpInsert, Entity: entity("a\x00b", "x", time.Time{}, nil)}}, 1, nil},
		{"KeyTooLongForBolt", []store.Op{{Kind: store.OpInsert, Entity: entity(strings.Repeat("k", bolt.MaxKeySize), "x", time.Time{}, nil)}}, 0, store.ErrKeyTooLong},
		{"SameEntityTwice", []store.Op{ok, {Kind: store.OpDelete, Entity: entity("p", "r0000", time.Time{}, nil)}, {Kind: store.OpDelete, Entity: entity("p", "r0000", time.Time{}, nil)}}, 2, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := s.Write(ctx, "acct", "tbl", c.ops)
			var opErr *store.OpError
			if !errors.As(err, &opErr) || opErr.Index != c.wantIndex {
				t.Fatalf("Write = %v; want an *store.OpError at %d", err, c.wantIndex)
			}
			if c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Errorf("Write = %v; want it to wrap %v", err, c.wantErr)
			}
			if _, err := s.GetEntity(ctx, "acct", "tbl", "p", "new"); !errors.Is(err, store.ErrEntityNotFound) {
				t.Errorf("a rejected Write applied its valid op: %v", err)
			}
			if _, err := s.GetEntity(ctx, "acct", "tbl", "p", "r0000"); err != nil {
				t.Errorf("a rejected Write deleted an entity: %v", err)
			}
		})
	}
	if err := s.Write(ctx, "acct", "tbl", nil); err != nil {
		t.Errorf("Write of no ops = %v", err)
	}
	if _, err := s.GetEntity(ctx, "acct", "tbl", "a\x00b", "x"); !errors.Is(err, store.ErrEntityNotFound) {
		t.Errorf("GetEntity with a separator in the PartitionKey = %v; want ErrEntityNotFound", err)
	}
}

// TestBatchedWritersFailIndependently puts writers that succeed and writers
// whose conditions fail into the same batch: each gets its own answer, and
// the failures neither block nor undo the others.
func TestBatchedWritersFailIndependently(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t, WithMaxBatch(1000))
	defer s.Close()
	fill(t, s, "p", 10)
	const n = 20
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ops []store.Op
			if i%2 == 0 { // succeeds: two inserts
				ops = []store.Op{
					{Kind: store.OpInsert, Entity: entity("ok", fmt.Sprintf("%02da", i), time.Unix(1, 0), nil)},
					{Kind: store.OpInsert, Entity: entity("ok", fmt.Sprintf("%02db", i), time.Unix(1, 0), nil)},
				}
			} else { // fails at op 1, after an insert that must not land
				ops = []store.Op{
					{Kind: store.OpInsert, Entity: entity("bad", fmt.Sprintf("%02d", i), time.Unix(1, 0), nil)},
					{Kind: store.OpInsert, Entity: entity("p", "r0003", time.Unix(1, 0), nil)},
				}
			}
			errs[i] = s.Write(ctx, "acct", "tbl", ops)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var opErr *store.OpError
		switch {
		case i%2 == 0 && err != nil:
			t.Errorf("writer %d: %v", i, err)
		case i%2 == 1 && (!errors.As(err, &opErr) || opErr.Index != 1 || !errors.Is(err, store.ErrEntityExists)):
			t.Errorf("writer %d = %v; want op 1 ErrEntityExists", i, err)
		}
	}
	ok, _ := s.QueryEntities(ctx, "acct", "tbl", store.Query{Top: 1000, Keys: model.KeyRange{PartitionKey: model.Bounds{Lower: &model.Bound{Value: "ok", Inclusive: true}, Upper: &model.Bound{Value: "ok", Inclusive: true}}}})
	bad, _ := s.QueryEntities(ctx, "acct", "tbl", store.Query{Top: 1000, Keys: model.KeyRange{PartitionKey: model.Bounds{Lower: &model.Bound{Value: "bad", Inclusive: true}, Upper: &model.Bound{Value: "bad", Inclusive: true}}}})
	if len(ok.Entities) != n || len(bad.Entities) != 0 {
		t.Errorf("%d entities from succeeding writers (want %d), %d from failing ones (want 0)", len(ok.Entities), n, len(bad.Entities))
	}
}

// A page ends once its entities reach store.PageByteBudget, so an answer
// stays a few MiB even when every entity is near Azure's 1 MiB.
func TestPageByteBudget(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t)
	defer s.Close()
	if _, err := s.CreateTable(ctx, "acct", "tbl"); err != nil {
		t.Fatal(err)
	}
	big := edm.NewString(strings.Repeat("x", model.MaxStringLength))
	const n = 20 // entities of 512 KiB (as stored: 256 KiB of UTF-8), 5 MiB in all
	for i := range n {
		props := map[string]edm.Value{}
		for j := range 8 {
			props[fmt.Sprintf("S%d", j)] = big
		}
		e := entity("p", fmt.Sprintf("r%02d", i), time.Unix(int64(i), 0), props)
		if err := s.Write(ctx, "acct", "tbl", []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
			t.Fatal(err)
		}
	}
	var sizes []int
	q := store.Query{}
	for {
		page, err := s.QueryEntities(ctx, "acct", "tbl", q)
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(page.Entities))
		if page.Next == nil {
			break
		}
		q.After = page.Next
	}
	if len(sizes) < 2 {
		t.Fatalf("page sizes %v: one page of 5 MiB", sizes)
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	if total != n {
		t.Fatalf("page sizes %v: %d entities, want %d", sizes, total, n)
	}
}
