package dynamostore

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// nearOneMiB is just under Azure's 1 MiB by its size formula, and about
// 1.5 MB of UTF-8: 16 strings of 32,000 three-byte characters (64,018
// bytes each to Azure, 96,000 to DynamoDB).
func nearOneMiB() props {
	p := props{}
	for i := range 16 {
		p[fmt.Sprintf("S%02d", i)] = edm.NewString(strings.Repeat(string(rune('一'+i)), 32000))
	}
	return p
}

// TestLargeEntities drives every write kind through entities larger than
// one DynamoDB item and checks the result, the items left in DynamoDB, and
// the calls each path costs.
func TestLargeEntities(t *testing.T) {
	t.Parallel()
	counter := newCallCounter()
	// The table's look-up, cached at its creation, holds for the test.
	env := newEnv(t, newTestStoreWith(t, Options{CatalogCacheTTL: time.Hour}, counter.option))
	if got := model.EntitySize(&model.Entity{PartitionKey: "big", RowKey: "e", Properties: nearOneMiB()}); got > maxEntitySize || got < maxEntitySize-30000 {
		t.Fatalf("test entity measures %d bytes; want just under 1 MiB", got)
	}

	// itemsOf counts the stored items of an entity: its main item and
	// overflow items.
	itemsOf := func(pk, rk string) int {
		n := 0
		for _, it := range env.rawItems(pk) {
			if main, _ := splitRowKey(stringAttr(it, attrRowKey)); main == encodeKey(rk) {
				n++
			}
		}
		return n
	}
	cur := newEntity("big", "e", nearOneMiB())
	type step struct {
		name      string
		op        func() store.Op
		want      map[string]int
		wantErr   error
		wantItems int // main + overflow items afterwards; 0: gone
		// next is the stored entity after the step, when it succeeds.
		next func(op store.Op) *model.Entity
	}
	replaced := func(op store.Op) *model.Entity { return op.Entity }
	merged := func(op store.Op) *model.Entity { return mergeInto(cur, op.Entity) }
	steps := []step{
		{"InsertNearOneMiB", func() store.Op { return store.Op{Kind: store.OpInsert, Entity: cur} },
			map[string]int{"TransactWriteItems": 1}, nil, 4, replaced},
		{"InsertExisting", func() store.Op { return store.Op{Kind: store.OpInsert, Entity: newEntity("big", "e", nearOneMiB())} },
			map[string]int{"TransactWriteItems": 1}, store.ErrEntityExists, 4, nil},
		{"ReplaceStale", func() store.Op {
			return store.Op{Kind: store.OpReplace, Entity: newEntity("big", "e", nil), Cond: store.CondTimestamp, Timestamp: testTime}
		}, map[string]int{"PutItem": 1}, store.ErrConditionFailed, 4, nil},
		{"MergeIfMatch", func() store.Op {
			return store.Op{Kind: store.OpMerge, Entity: newEntity("big", "e", props{"S00": edm.NewString("short now"), "New": edm.NewInt64(7)}), Cond: store.CondTimestamp, Timestamp: cur.Timestamp}
		}, map[string]int{"UpdateItem": 1, "TransactGetItems": 1, "TransactWriteItems": 1}, nil, 4, merged},
		{"MergePastOneMiB", func() store.Op {
			return store.Op{Kind: store.OpMerge, Entity: newEntity("big", "e", props{"Extra1": edm.NewString(strings.Repeat("x", 32000)), "Extra2": edm.NewString(strings.Repeat("y", 32000))})}
		}, map[string]int{"UpdateItem": 1, "TransactGetItems": 1}, store.ErrEntityTooLarge, 4, nil},
		{"ReplaceWithSmall", func() store.Op {
			return store.Op{Kind: store.OpReplace, Entity: newEntity("big", "e", props{"Small": edm.NewBoolean(true)}), Cond: store.CondExists}
		}, map[string]int{"PutItem": 1, "TransactWriteItems": 1}, nil, 1, replaced},
		{"ReplaceSmallWithLarge", func() store.Op {
			return store.Op{Kind: store.OpReplace, Entity: newEntity("big", "e", binaries(10, 60<<10))}
		}, map[string]int{"TransactWriteItems": 1}, nil, 2, replaced},
		{"MergeGrowsWithinOneItemLayout", func() store.Op {
			return store.Op{Kind: store.OpMerge, Entity: newEntity("big", "e", props{"More": edm.NewBinary(make([]byte, 60<<10))})}
		}, map[string]int{"UpdateItem": 1, "TransactGetItems": 1, "TransactWriteItems": 1}, nil, 2, merged},
		{"DeleteMissingCondition", func() store.Op {
			return store.Op{Kind: store.OpDelete, Entity: newEntity("big", "e", nil), Cond: store.CondTimestamp, Timestamp: testTime}
		}, map[string]int{"DeleteItem": 1}, store.ErrConditionFailed, 2, nil},
		{"Delete", func() store.Op {
			return store.Op{Kind: store.OpDelete, Entity: newEntity("big", "e", nil), Cond: store.CondExists}
		},
			map[string]int{"DeleteItem": 1, "TransactWriteItems": 1}, nil, 0, nil},
		{"MergeUpsertLarge", func() store.Op { return store.Op{Kind: store.OpMerge, Entity: newEntity("big", "e", nearOneMiB())} },
			// The patch alone outgrows an item: no UpdateItem is tried; the
			// read finds nothing, and the merge result is inserted.
			map[string]int{"GetItem": 1, "TransactWriteItems": 1}, nil, 4, func(op store.Op) *model.Entity { return op.Entity }},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			op := st.op()
			counter.take()
			err := env.write(op)
			got := counter.take()
			switch {
			case st.wantErr == nil && err != nil:
				t.Fatalf("Write: %v", err)
			case st.wantErr != nil && !errors.Is(err, st.wantErr):
				t.Fatalf("Write = %v; want %v", err, st.wantErr)
			}
			if !maps.Equal(got, st.want) {
				t.Errorf("DynamoDB calls %v; want %v", got, st.want)
			}
			if err == nil && st.next != nil {
				cur = st.next(op)
			}
			if n := itemsOf("big", "e"); n != st.wantItems {
				t.Errorf("%d stored items; want %d", n, st.wantItems)
			}
			if st.wantItems == 0 {
				if _, err := env.s.GetEntity(env.ctx, env.account, env.table, "big", "e"); !errors.Is(err, store.ErrEntityNotFound) {
					t.Errorf("GetEntity after delete = %v", err)
				}
				return
			}
			counter.take()
			env.wantStored(cur)
			wantGet := map[string]int{"GetItem": 1}
			if st.wantItems > 1 {
				wantGet["TransactGetItems"] = 1
			}
			if got := counter.take(); !maps.Equal(got, wantGet) {
				t.Errorf("GetEntity calls %v; want %v", got, wantGet)
			}
		})
	}
}

func TestLargeEntityInBatch(t *testing.T) {
	t.Parallel()
	counter := newCallCounter()
	env := newEnv(t, newTestStore(t, counter.option))
	small := newEntity("b", "small", props{"A": edm.NewInt32(1)})
	large := newEntity("b", "large", binaries(12, 60<<10))
	counter.take()
	env.mustWrite(store.Op{Kind: store.OpInsert, Entity: small}, store.Op{Kind: store.OpInsert, Entity: large})
	if got := counter.take(); !maps.Equal(got, map[string]int{"TransactWriteItems": 1}) {
		t.Errorf("batch with a large insert cost %v; want one TransactWriteItems", got)
	}
	env.wantStored(small)
	env.wantStored(large)

	// A batch that replaces the large entity with a small one and merges
	// into the small one: the replace learns the stored layout from the
	// failed transaction and the batch is redone whole.
	repl := newEntity("b", "large", props{"Now": edm.NewString("small")})
	patch := newEntity("b", "small", props{"B": edm.NewInt32(2)})
	counter.take()
	env.mustWrite(store.Op{Kind: store.OpReplace, Entity: repl}, store.Op{Kind: store.OpMerge, Entity: patch, Cond: store.CondTimestamp, Timestamp: small.Timestamp})
	if got := counter.take(); !maps.Equal(got, map[string]int{"TransactWriteItems": 2}) {
		t.Errorf("batch replacing a large entity cost %v; want two TransactWriteItems", got)
	}
	env.wantStored(repl)
	env.wantStored(mergeInto(small, patch))
	if n := len(env.rawItems("b")); n != 2 {
		t.Errorf("%d items left in the partition; want 2 (no overflow items)", n)
	}

	// A failing op in a batch with a large entity: nothing applies.
	again := newEntity("b", "large2", binaries(12, 60<<10))
	err := env.write(store.Op{Kind: store.OpInsert, Entity: again}, store.Op{Kind: store.OpDelete, Entity: newEntity("b", "missing", nil)})
	var opErr *store.OpError
	if !errors.As(err, &opErr) || opErr.Index != 1 || !errors.Is(err, store.ErrEntityNotFound) {
		t.Fatalf("Write = %v; want OpError at 1 wrapping ErrEntityNotFound", err)
	}
	if n := len(env.rawItems("b")); n != 2 {
		t.Errorf("%d items in the partition after a failed batch; want 2", n)
	}
}

// TestQueryLargeEntities pages through a partition and a scan mixing small
// and chunked entities with every page size, so overflow items fall on
// DynamoDB page boundaries, and with a time budget so short that every page
// ends early and resolves a pending chunked entity by a separate read.
func TestQueryLargeEntities(t *testing.T) {
	t.Parallel()
	for _, budget := range []struct {
		name string
		opts Options
	}{{"DefaultBudget", Options{}}, {"TinyTimeBudget", Options{QueryTimeBudget: 1}}} {
		t.Run(budget.name, func(t *testing.T) {
			env := newEnv(t, newTestStoreWith(t, budget.opts))
			var want []*model.Entity
			for i := range 6 {
				p := props{"I": edm.NewInt32(int32(i))}
				if i%2 == 1 {
					p = binaries(8+i, 60<<10)
					p["I"] = edm.NewInt32(int32(i))
				}
				e := newEntity("q", fmt.Sprintf("r%d", i), p)
				env.insert(e)
				want = append(want, e)
			}
			for _, top := range []int{1, 2, 3, 1000} {
				for _, q := range []store.Query{{Keys: pkRange("q")}, {}} {
					q.Top = top
					got := queryAll(t, env, q)
					if len(got) != len(want) {
						t.Fatalf("Top %d: %d entities; want %d", top, len(got), len(want))
					}
					for i := range want {
						if diff := entityDiff(got[i], want[i]); diff != "" {
							t.Fatalf("Top %d: entity %d: %s", top, i, diff)
						}
					}
				}
			}
		})
	}
}

// queryAll pages through a query.
func queryAll(t *testing.T, env *testEnv, q store.Query) []*model.Entity {
	t.Helper()
	var all []*model.Entity
	for pages := 0; ; pages++ {
		if pages > 1000 {
			t.Fatal("paging does not end")
		}
		page, err := env.s.QueryEntities(env.ctx, env.account, env.table, q)
		if err != nil {
			t.Fatalf("QueryEntities: %v", err)
		}
		if len(page.Entities) > q.Top {
			t.Fatalf("%d entities on a page of Top %d", len(page.Entities), q.Top)
		}
		all = append(all, page.Entities...)
		if page.Next == nil {
			return all
		}
		q.After = page.Next
	}
}

// TestBatchNamesItsFirstFailingOp: a batch that fails names its first
// failing op, as Azure's answer does, also when a later op is a merge
// whose properties alone outgrow one item (which is resolved from the
// stored entity before anything is sent). Found by internal/linearize
// (a batch of an insert of an existing entity and such a merge with a
// stale If-Match answered 412 at the merge instead of 409 at the insert).
func TestBatchNamesItsFirstFailingOp(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	exists := newEntity("f", "exists", nil)
	target := newEntity("f", "target", props{"A": edm.NewInt32(1)})
	env.insert(exists)
	env.insert(target)
	stale := target.Timestamp.Add(-tsTick)
	insert := store.Op{Kind: store.OpInsert, Entity: newEntity("f", "exists", nil)}
	bigMerge := store.Op{Kind: store.OpMerge, Entity: newEntity("f", "target", binaries(12, 60<<10)), Cond: store.CondTimestamp, Timestamp: stale}
	for _, tc := range []struct {
		name  string
		ops   []store.Op
		index int
		want  error
	}{
		{"the insert first", []store.Op{insert, bigMerge}, 0, store.ErrEntityExists},
		{"the merge first", []store.Op{bigMerge, insert}, 0, store.ErrConditionFailed},
		{"only the merge fails", []store.Op{{Kind: store.OpInsert, Entity: newEntity("f", "new", nil)}, bigMerge}, 1, store.ErrConditionFailed},
	} {
		err := env.write(tc.ops...)
		var opErr *store.OpError
		if !errors.As(err, &opErr) || opErr.Index != tc.index || !errors.Is(err, tc.want) {
			t.Errorf("%s: Write = %v; want OpError at %d wrapping %v", tc.name, err, tc.index, tc.want)
		}
	}
	env.wantStored(exists)
	env.wantStored(target)
	if _, err := env.s.GetEntity(env.ctx, env.account, env.table, "f", "new"); !errors.Is(err, store.ErrEntityNotFound) {
		t.Errorf("the insert of a failed batch was applied: %v", err)
	}
}
