package storetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Bound helpers for building key ranges.
func incl(v string) *model.Bound { return &model.Bound{Value: v, Inclusive: true} }
func excl(v string) *model.Bound { return &model.Bound{Value: v} }

func pkExact(pk string) model.KeyRange {
	return model.KeyRange{PartitionKey: model.Bounds{Lower: incl(pk), Upper: incl(pk)}}
}

func pkIs(pk string) func(*model.Entity) bool {
	return func(e *model.Entity) bool { return e.PartitionKey == pk }
}

// maxPages bounds paging so a store that never ends fails instead of hanging.
const maxPages = 5000

// queryAll pages through a query, cycling through tops for the page sizes
// (q.Top when none), and returns every entity. It checks what the contract
// promises for each page: at most Top entities, all matching Match and
// within Keys, no entity twice, a continuation that moves, and an end.
func (f *fixture) queryAll(table string, q store.Query, tops ...int) []*model.Entity {
	f.t.Helper()
	if len(tops) == 0 {
		tops = []int{q.Top}
	}
	var all []*model.Entity
	seen := map[[2]string]bool{}
	cursors := map[store.Cursor]bool{}
	for pages := 0; ; pages++ {
		if pages == maxPages {
			f.t.Fatalf("paging did not end after %d pages (%d entities)", pages, len(all))
		}
		q.Top = tops[pages%len(tops)]
		page, err := f.s.QueryEntities(f.ctx, f.account, table, q)
		if err != nil {
			f.t.Fatalf("QueryEntities(page %d, Top %d, After %+v): %v", pages, q.Top, q.After, err)
		}
		if len(page.Entities) > q.Top {
			f.t.Fatalf("page %d holds %d entities; Top is %d", pages, len(page.Entities), q.Top)
		}
		for _, e := range page.Entities {
			if seen[keyOf(e)] {
				f.t.Fatalf("entity %q returned twice while paging", keyOf(e))
			}
			seen[keyOf(e)] = true
			if !q.Keys.Contains(e.PartitionKey, e.RowKey) {
				f.t.Fatalf("entity %q lies outside the query's key range", keyOf(e))
			}
			if q.Match != nil && !q.Match(e) {
				f.t.Fatalf("entity %q does not satisfy Match", keyOf(e))
			}
		}
		all = append(all, page.Entities...)
		if page.Next == nil {
			return all
		}
		if cursors[*page.Next] {
			f.t.Fatalf("continuation %+v repeats: paging would not end", *page.Next)
		}
		cursors[*page.Next] = true
		if !f.opts.unorderedPartitions && q.After != nil && !cursorLess(*q.After, *page.Next) {
			f.t.Fatalf("continuation %+v does not move past %+v", *page.Next, *q.After)
		}
		next := *page.Next
		q.After = &next
	}
}

func cursorLess(a, b store.Cursor) bool {
	if a.PartitionKey != b.PartitionKey {
		return a.PartitionKey < b.PartitionKey
	}
	return a.RowKey < b.RowKey
}

// wantEntities compares a query's result with want (sorted by keys). With
// unordered partitions the partitions may come in any order, but each must
// come whole and in RowKey order.
func (f *fixture) wantEntities(got, want []*model.Entity, unorderedPartitions bool) {
	f.t.Helper()
	if unorderedPartitions {
		done := map[string]bool{}
		for i, e := range got {
			if i > 0 && got[i-1].PartitionKey == e.PartitionKey {
				if got[i-1].RowKey >= e.RowKey {
					f.t.Fatalf("RowKey %q follows %q within partition %q", e.RowKey, got[i-1].RowKey, e.PartitionKey)
				}
				continue
			}
			if done[e.PartitionKey] {
				f.t.Fatalf("partition %q comes back in two pieces", e.PartitionKey)
			}
			done[e.PartitionKey] = true
		}
		got = slices.Clone(got)
		sortEntities(got)
	}
	if len(got) != len(want) {
		f.t.Fatalf("query returned %d entities %v; want %d %v", len(got), keysOf(got), len(want), keysOf(want))
	}
	for i := range want {
		if diff := entityDiff(got[i], want[i]); diff != "" {
			f.t.Fatalf("entity %d: %s (got order %v)", i, diff, keysOf(got))
		}
	}
}

func keysOf(es []*model.Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%q/%q", e.PartitionKey, e.RowKey)
	}
	if len(out) > 30 {
		out = append(out[:30], "...")
	}
	return out
}

// queryData fills a table with partitions whose keys test the edges of key
// ranges: the empty PartitionKey, and "p1" next to its extension "p1x".
func (f *fixture) queryData(table string) []*model.Entity {
	f.t.Helper()
	var all []*model.Entity
	n := 0
	for _, pk := range []string{"p2", "", "p1x", "p0", "p9", "p1", "p3"} {
		rks := []string{"r09", "r00", "r05", "r01", "r07", "r02", "r08", "r03", "r06", "r04"}
		if pk == "p2" || pk == "" {
			rks = append(rks, "", "r055")
		}
		for _, rk := range rks {
			e := newEntity(pk, rk, props{"N": edm.NewInt32(int32(n)), "Even": edm.NewBoolean(n%2 == 0)})
			n++
			all = append(all, e)
		}
	}
	// Insert in batches per partition: fewer round trips for slow stores.
	for i := 0; i < len(all); {
		j := i
		var ops []store.Op
		for j < len(all) && all[j].PartitionKey == all[i].PartitionKey {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: all[j]})
			j++
		}
		f.mustWrite(table, ops...)
		i = j
	}
	sortEntities(all)
	return all
}

func (s suite) testQuery(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()
	data := f.queryData(table)
	even := func(e *model.Entity) bool { return e.Properties["Even"].Bool }
	pkRange := func(lo, hi *model.Bound) model.KeyRange {
		return model.KeyRange{PartitionKey: model.Bounds{Lower: lo, Upper: hi}}
	}
	withRows := func(r model.KeyRange, lo, hi *model.Bound) model.KeyRange {
		r.RowKey = model.Bounds{Lower: lo, Upper: hi}
		return r
	}
	cases := []struct {
		name  string
		keys  model.KeyRange
		extra func(*model.Entity) bool // besides the key range; nil: none
	}{
		{"All", model.KeyRange{}, nil},
		{"PartitionExact", pkExact("p1"), nil},
		{"PartitionExactEmptyKey", pkExact(""), nil},
		{"PartitionExactMissing", pkExact("zz"), nil},
		{"PartitionExactRowRange", withRows(pkExact("p2"), incl("r03"), excl("r07")), nil},
		{"PartitionExactRowExclusive", withRows(pkExact("p2"), excl("r05"), incl("r07")), nil},
		{"PartitionExactRowLowerOnly", withRows(pkExact("p3"), excl("r05"), nil), nil},
		{"PartitionExactRowUpperOnly", withRows(pkExact("p3"), nil, excl("r02")), nil},
		{"PartitionExactRowExact", withRows(pkExact("p2"), incl("r055"), incl("r055")), nil},
		{"PartitionExactEmptyRowKey", withRows(pkExact("p2"), incl(""), incl("")), nil},
		{"PartitionRangeInclusive", pkRange(incl("p1"), incl("p2")), nil},
		{"PartitionRangeExclusive", pkRange(excl("p1"), excl("p2")), nil},
		{"PartitionLowerOnly", pkRange(excl("p2"), nil), nil},
		{"PartitionUpperOnly", pkRange(nil, excl("p1")), nil},
		{"PartitionEmptyRange", pkRange(excl("p3"), excl("p3")), nil},
		{"PartitionInvertedRange", pkRange(incl("p3"), incl("p1")), nil},
		{"RowRangeAcrossPartitions", withRows(model.KeyRange{}, incl("r04"), incl("r05")), nil},
		{"RowExactAcrossPartitions", withRows(model.KeyRange{}, incl("r07"), incl("r07")), nil},
		{"RowBelowEverything", withRows(model.KeyRange{}, nil, excl("")), nil},
		{"RowAndPartitionRanges", withRows(pkRange(incl("p0"), excl("p3")), excl("r02"), excl("r05")), nil},
		{"PropertyOnly", model.KeyRange{}, even},
		{"PartitionAndProperty", pkExact("p2"), even},
		{"MatchNothing", model.KeyRange{}, func(*model.Entity) bool { return false }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			match := func(e *model.Entity) bool {
				return c.keys.Contains(e.PartitionKey, e.RowKey) && (c.extra == nil || c.extra(e))
			}
			var want []*model.Entity
			for _, e := range data {
				if match(e) {
					want = append(want, e)
				}
			}
			_, exact := c.keys.PartitionKey.Exact()
			unordered := f.opts.unorderedPartitions && !exact
			for _, tops := range [][]int{{1}, {2}, {5}, {1000}, {3, 1, 1000, 2}} {
				q := store.Query{Keys: c.keys, Match: match}
				f.wantEntities(f.queryAll(table, q, tops...), want, unordered)
			}
		})
	}
	t.Run("NilMatch", func(t *testing.T) {
		for _, tops := range [][]int{{4}, {1000}} {
			f.wantEntities(f.queryAll(table, store.Query{}, tops...), data, f.opts.unorderedPartitions)
		}
	})
	t.Run("ResumeAfterCursor", func(t *testing.T) {
		inP2 := func(rks ...string) []*model.Entity {
			var out []*model.Entity
			for _, e := range data {
				if e.PartitionKey == "p2" && slices.Contains(rks, e.RowKey) {
					out = append(out, e)
				}
			}
			return out
		}
		for _, c := range []struct {
			name  string
			after store.Cursor
			want  []*model.Entity
		}{
			{"ExistingKey", store.Cursor{PartitionKey: "p2", RowKey: "r05"}, inP2("r055", "r06", "r07", "r08", "r09")},
			{"MissingKey", store.Cursor{PartitionKey: "p2", RowKey: "r0555"}, inP2("r06", "r07", "r08", "r09")},
			{"EmptyRowKey", store.Cursor{PartitionKey: "p2", RowKey: ""}, inP2("r00", "r01", "r02", "r03", "r04", "r05", "r055", "r06", "r07", "r08", "r09")},
			{"LastKey", store.Cursor{PartitionKey: "p2", RowKey: "r09"}, nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				after := c.after
				q := store.Query{Keys: pkExact("p2"), Match: pkIs("p2"), After: &after}
				f.wantEntities(f.queryAll(table, q, 1, 3, 1000), c.want, false)
			})
		}
	})
	t.Run("WritesBetweenPages", func(t *testing.T) {
		// A continuation stays valid when its entity is deleted, and later
		// pages see entities inserted after it but not before it.
		q := store.Query{Keys: pkExact("p3"), Match: pkIs("p3"), Top: 3}
		// Page until the cursor rests inside the partition (stores with a
		// small scan budget return short pages).
		for q.After == nil || q.After.RowKey < "r02" {
			page, err := f.s.QueryEntities(f.ctx, f.account, table, q)
			if err != nil {
				t.Fatal(err)
			}
			if page.Next == nil {
				t.Fatalf("a page of Top 3 ending before r02 of 10 entities has no continuation")
			}
			q.After = page.Next
		}
		if q.After.RowKey > "r07" {
			t.Fatalf("pages of Top 3 skipped to %+v", *q.After)
		}
		f.mustWrite(table, store.Op{Kind: store.OpDelete, Entity: newEntity("p3", q.After.RowKey, nil)})
		before := newEntity("p3", "r00x", nil)
		after := newEntity("p3", q.After.RowKey+"x", nil)
		f.insert(table, before, after)
		rest := f.queryAll(table, q, 2)
		var want []*model.Entity
		for _, e := range append(slices.Clone(data), after) {
			if e.PartitionKey == "p3" && e.RowKey > q.After.RowKey {
				want = append(want, e)
			}
		}
		sortEntities(want)
		f.wantEntities(rest, want, false)
	})
	t.Run("LongKeys", func(t *testing.T) {
		// Keys whose (PartitionKey, RowKey) pairs share their first
		// kilobyte or more, paged across those stretches: an index can
		// hold only a prefix of such pairs, yet the order must hold.
		long := f.newTable()
		base := strings.Repeat("k", 1000)
		var all []*model.Entity
		for _, pk := range []string{base + "b", base, base + "a", "short"} {
			var ops []store.Op
			for _, rk := range []string{"r9", strings.Repeat("r", 40) + "2", "", strings.Repeat("r", 40) + "1", strings.Repeat("r", 40), "r0"} {
				e := newEntity(pk, rk, props{"N": edm.NewInt32(int32(len(all)))})
				all = append(all, e)
				ops = append(ops, store.Op{Kind: store.OpInsert, Entity: e})
			}
			f.mustWrite(long, ops...)
		}
		sortEntities(all)
		after := func(pk string) []*model.Entity {
			var out []*model.Entity
			for _, e := range all {
				if e.PartitionKey > pk {
					out = append(out, e)
				}
			}
			return out
		}
		for _, tops := range [][]int{{1}, {2}, {5}, {1000}} {
			f.wantEntities(f.queryAll(long, store.Query{}, tops...), all, f.opts.unorderedPartitions)
			keys := model.KeyRange{PartitionKey: model.Bounds{Lower: excl(base)}}
			q := store.Query{Keys: keys, Match: func(e *model.Entity) bool { return keys.Contains(e.PartitionKey, e.RowKey) }}
			f.wantEntities(f.queryAll(long, q, tops...), after(base), f.opts.unorderedPartitions)
		}
	})
	t.Run("EmptyTable", func(t *testing.T) {
		empty := f.newTable()
		for _, q := range []store.Query{{Top: 1}, {Top: 1000}, {Keys: pkExact("p"), Match: pkIs("p"), Top: 5}} {
			if got := f.queryAll(empty, q); len(got) != 0 {
				t.Errorf("empty table returned %v", keysOf(got))
			}
		}
	})
}
