package storetest

import (
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// testCursorLimits: a query resumes after any cursor and honours any key
// bound, whatever its length, with an answer rather than a failure. Keys of
// 1024 bytes are the longest RowKey DynamoDB indexes; cursors and bounds
// longer than any stored key (a forged continuation, a long $filter
// literal) still select exactly the entities after or within them.
func (s suite) testCursorLimits(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()
	long := strings.Repeat("x", 1024) // the longest RowKey every store holds
	longer := strings.Repeat("x", 2000)
	huge := strings.Repeat("é", 1500) // 3,000 bytes
	var all []*model.Entity
	for _, pk := range []string{"p", "q"} {
		for _, rk := range []string{"a", long, "y", "é"} {
			all = append(all, newEntity(pk, rk, nil))
		}
	}
	f.insert(table, all...)
	sortEntities(all)
	// pick returns the entities of all whose keys satisfy keep.
	pick := func(keep func(pk, rk string) bool) []*model.Entity {
		var out []*model.Entity
		for _, e := range all {
			if keep(e.PartitionKey, e.RowKey) {
				out = append(out, e)
			}
		}
		return out
	}
	after := func(c store.Cursor) func(pk, rk string) bool {
		return func(pk, rk string) bool { return pk > c.PartitionKey || pk == c.PartitionKey && rk > c.RowKey }
	}
	rows := func(lo, hi *model.Bound) model.KeyRange {
		r := pkExact("p")
		r.RowKey = model.Bounds{Lower: lo, Upper: hi}
		return r
	}
	inP := func(keep func(rk string) bool) func(pk, rk string) bool {
		return func(pk, rk string) bool { return pk == "p" && keep(rk) }
	}
	cases := []struct {
		name  string
		q     store.Query
		want  []*model.Entity
		cross bool // the query spans partitions
	}{
		{"PartitionAfterLongestKey", store.Query{Keys: pkExact("p"), After: &store.Cursor{PartitionKey: "p", RowKey: long}},
			pick(inP(func(rk string) bool { return rk > long })), false},
		{"PartitionAfterKeyLongerThanAnyStored", store.Query{Keys: pkExact("p"), After: &store.Cursor{PartitionKey: "p", RowKey: longer}},
			pick(inP(func(rk string) bool { return rk > longer })), false},
		{"PartitionAfterHugeKey", store.Query{Keys: pkExact("p"), After: &store.Cursor{PartitionKey: "p", RowKey: huge}},
			nil, false},
		{"PartitionAfterHugePartitionKey", store.Query{Keys: pkExact("p"), After: &store.Cursor{PartitionKey: huge}},
			nil, false},
		{"PartitionExactHuge", store.Query{Keys: pkExact(huge)}, nil, false},
		{"RowsAboveLongBound", store.Query{Keys: rows(excl(longer), nil)}, pick(inP(func(rk string) bool { return rk > longer })), false},
		{"RowsFromLongBound", store.Query{Keys: rows(incl(longer), nil)}, pick(inP(func(rk string) bool { return rk >= longer })), false},
		{"RowsBelowLongBound", store.Query{Keys: rows(nil, excl(longer))}, pick(inP(func(rk string) bool { return rk < longer })), false},
		{"RowsUpToHugeBound", store.Query{Keys: rows(incl("a"), incl(huge))}, pick(inP(func(rk string) bool { return rk <= huge })), false},
		{"RowsAfterLongestKey", store.Query{Keys: rows(excl(long), incl(long+"z"))}, pick(inP(func(rk string) bool { return rk > long && rk <= long+"z" })), false},
		{"ScanAfterLongestKey", store.Query{After: &store.Cursor{PartitionKey: "p", RowKey: long}}, pick(after(store.Cursor{PartitionKey: "p", RowKey: long})), true},
		{"ScanAfterKeyLongerThanAnyStored", store.Query{After: &store.Cursor{PartitionKey: "p", RowKey: longer}}, pick(after(store.Cursor{PartitionKey: "p", RowKey: longer})), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, top := range []int{1000, 1} {
				q := tc.q
				q.Top = top
				got := f.queryAll(table, q)
				want := tc.want
				if tc.cross && f.opts.unorderedPartitions {
					// A scan in hash order resumes within the cursor's
					// partition and then goes on to the partitions after
					// it in that order, which the test cannot name: check
					// the cursor's own partition only.
					got = onlyPartition(got, tc.q.After.PartitionKey)
					want = onlyPartition(want, tc.q.After.PartitionKey)
				}
				f.wantEntities(got, want, false)
			}
		})
	}

	t.Run("TablesAfterAnyCursor", func(t *testing.T) {
		// next sorts right after the cursor built from table's name, so a
		// store that answers every cursor with an empty page fails.
		next := table + "x"
		f.createTable(f.account, next)
		cases := []struct {
			after string
			want  string // a table the page must hold; "" for none
		}{
			{strings.Repeat("z", 3000), ""},
			{"~", ""},
			{"\xff", ""},
			{strings.ToLower(table) + "\x00", next},
		}
		for _, c := range cases {
			page, err := f.s.QueryTables(f.ctx, f.account, store.TableQuery{Top: 1000, After: c.after})
			if err != nil {
				t.Fatalf("QueryTables after %.20q: %v", c.after, err)
			}
			found := c.want == ""
			for _, ti := range page.Tables {
				if strings.ToLower(ti.Name) <= c.after {
					t.Fatalf("QueryTables after %.20q returned %q", c.after, ti.Name)
				}
				found = found || ti.Name == c.want
			}
			if !found {
				t.Errorf("QueryTables after %.20q: %d tables without %q", c.after, len(page.Tables), c.want)
			}
		}
	})
}

func onlyPartition(es []*model.Entity, pk string) []*model.Entity {
	var out []*model.Entity
	for _, e := range es {
		if e.PartitionKey == pk {
			out = append(out, e)
		}
	}
	return out
}
