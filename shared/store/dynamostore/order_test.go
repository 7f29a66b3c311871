package dynamostore

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// k joins keys so that string order is key order.
func k(pk, rk string) string { return pk + "\x00" + rk }

func sortedKeys(es []*model.Entity) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = k(e.PartitionKey, e.RowKey)
	}
	return out
}

// pages pages through a query with the given page size and returns every
// entity and the items read in all.
func pages(t *testing.T, env *testEnv, q store.Query, top int) ([]*model.Entity, int) {
	t.Helper()
	var all []*model.Entity
	read := 0
	q.Top = top
	for range 10000 {
		page, err := env.s.QueryEntities(env.ctx, env.account, env.table, q)
		if err != nil {
			t.Fatalf("QueryEntities: %v", err)
		}
		all = append(all, page.Entities...)
		read += page.ItemsRead
		if page.Next == nil {
			return all, read
		}
		q.After = page.Next
	}
	t.Fatal("paging does not end")
	return nil, 0
}

func wantOrder(t *testing.T, got []*model.Entity, want []string) {
	t.Helper()
	g := sortedKeys(got)
	for i := range max(len(g), len(want)) {
		if i >= len(g) || i >= len(want) || g[i] != want[i] {
			short := func(s []string) string {
				if i >= len(s) {
					return "(end)"
				}
				return fmt.Sprintf("%.60q", s[i])
			}
			t.Fatalf("got %d entities, want %d; entity %d is %s, want %s", len(g), len(want), i, short(g), short(want))
		}
	}
}

// TestOrderTiesInOneShard pages through many keys whose index encodings
// share their first 1024 bytes, so that ties fill whole index pages of a
// shard and a group spans several of them.
func TestOrderTiesInOneShard(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	pk := strings.Repeat("p", 1020)
	var want []string
	var ops []store.Op
	for i := range 90 {
		rk := strings.Repeat("r", 10) + fmt.Sprintf("%03d", (i*37)%90)
		ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity(pk, rk, nil)})
		want = append(want, k(pk, rk))
		if len(ops) == 30 {
			env.mustWrite(ops...)
			ops = nil
		}
	}
	env.mustWriteAll(newEntity("a", "x", nil), newEntity("zz", "", nil))
	want = append(want, k("a", "x"), k("zz", ""))
	slices.Sort(want)
	for _, top := range []int{1, 7, 1000} {
		got, _ := pages(t, env, store.Query{}, top)
		wantOrder(t, got, want)
	}
}

func (env *testEnv) mustWriteAll(es ...*model.Entity) {
	env.t.Helper()
	var ops []store.Op
	for _, e := range es {
		ops = append(ops, store.Op{Kind: store.OpInsert, Entity: e})
	}
	env.mustWrite(ops...)
}

// TestOrderedRangeReads checks that a PartitionKey range, and a lower bound
// with a small Top, read about what they return, not the table.
func TestOrderedRangeReads(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	for p := range 40 {
		var es []*model.Entity
		for r := range 10 {
			es = append(es, newEntity(fmt.Sprintf("p%02d", p), fmt.Sprintf("r%d", r), props{"N": edm.NewInt32(int32(r))}))
		}
		env.mustWriteAll(es...)
	}
	rangeQ := func(lo, hi string) store.Query {
		keys := model.KeyRange{PartitionKey: model.Bounds{Lower: &model.Bound{Value: lo, Inclusive: true}, Upper: &model.Bound{Value: hi}}}
		return store.Query{Keys: keys, Match: func(e *model.Entity) bool { return keys.Contains(e.PartitionKey, e.RowKey) }}
	}
	for _, top := range []int{1000, 25} {
		got, read := pages(t, env, rangeQ("p10", "p14"), top)
		if len(got) != 40 || got[0].PartitionKey != "p10" || got[39].PartitionKey != "p13" {
			t.Fatalf("range returned %d entities %q", len(got), sortedKeys(got))
		}
		if read > 2*len(got) {
			t.Errorf("Top %d: the range read %d items for %d entities", top, read, len(got))
		}
	}
	lower := model.KeyRange{PartitionKey: model.Bounds{Lower: &model.Bound{Value: "p30"}}}
	page, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{Keys: lower, Top: 5})
	if err != nil {
		t.Fatal(err)
	}
	if g := sortedKeys(page.Entities); !slices.Equal(g, []string{k("p31", "r0"), k("p31", "r1"), k("p31", "r2"), k("p31", "r3"), k("p31", "r4")}) || page.Next == nil {
		t.Fatalf("PartitionKey gt p30, Top 5: %q, next %v", g, page.Next)
	}
	if page.ItemsRead > 2*orderShards {
		t.Errorf("PartitionKey gt p30, Top 5 read %d items", page.ItemsRead)
	}
}

// TestIndexMatchesEntities checks, after writes of every kind, that the
// index holds exactly the main items, with current values: overflow items
// of large entities stay out of it.
func TestIndexMatchesEntities(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	env.mustWriteAll(newEntity("a", "1", props{"V": edm.NewInt32(1)}), newEntity("a", "2", nil), newEntity("b", "", nil))
	env.insert(newEntity("big", "x", nearOneMiB()))
	env.insert(newEntity("big", "y", nearOneMiB()))
	env.mustWrite(
		store.Op{Kind: store.OpMerge, Entity: newEntity("a", "1", props{"W": edm.NewInt32(2)})},
		store.Op{Kind: store.OpMerge, Entity: newEntity("c", "new", props{"W": edm.NewInt32(3)})}, // merge-upsert
		store.Op{Kind: store.OpReplace, Entity: newEntity("big", "x", props{"Small": edm.NewBoolean(true)})},
		store.Op{Kind: store.OpDelete, Entity: newEntity("a", "2", nil)},
	)
	env.mustWrite(store.Op{Kind: store.OpMerge, Entity: newEntity("d", "single", nil)})
	loc, err := env.s.locate(env.ctx, env.account, env.table)
	if err != nil {
		t.Fatal(err)
	}
	var indexed []string
	var start item
	for {
		out, err := env.s.db.Scan(env.ctx, &dynamodb.ScanInput{TableName: aws.String(loc.table), IndexName: aws.String(orderIndex), ExclusiveStartKey: start})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			pk, rk := stringAttr(it, attrPartitionKey), stringAttr(it, attrRowKey)
			if _, chunk := splitRowKey(rk); chunk > 0 {
				t.Errorf("overflow item %q/%q is in the index", pk, rk)
			}
			indexed = append(indexed, k(loc.unpk(pk), decodeKey(rk)))
		}
		if start = out.LastEvaluatedKey; start == nil {
			break
		}
	}
	slices.Sort(indexed)
	want := []string{k("a", "1"), k("b", ""), k("big", "x"), k("big", "y"), k("c", "new"), k("d", "single")}
	if !slices.Equal(indexed, want) {
		t.Fatalf("index holds %q; want %q", indexed, want)
	}
	got, _ := pages(t, env, store.Query{}, 2)
	wantOrder(t, got, want)
	for _, e := range got {
		env.wantStored(e)
	}
	if got[4].Properties["W"].Int != 3 || !got[2].Properties["Small"].Bool {
		t.Fatalf("index holds stale values: %v %v", got[4].Properties, got[2].Properties)
	}
}

// TestMoveGivesOldTableTheIndex writes a table as the code before the
// order index did (a DynamoDB table of its own without the index, items
// without its attributes), reads it by Scan, moves it into the shared
// table (the one migration of such tables) and reads it in key order
// through the index.
func TestMoveGivesOldTableTheIndex(t *testing.T) {
	t.Parallel()
	s := newTestStoreWith(t, Options{MoveSettle: time.Millisecond})
	old := &testEnv{t: t, s: s, ctx: dynamolocal.Context(t, testTimeout), account: "acct", table: "Table1"}
	phys := createPlacement(t, s, old.account, old.table, false)
	var want []string
	for _, pk := range []string{"m", "", "b", "z", "k"} {
		var es []*model.Entity
		for _, rk := range []string{"2", "", "1"} {
			es = append(es, newEntity(pk, rk, props{"V": edm.NewString(pk + rk)}))
			want = append(want, k(pk, rk))
		}
		old.mustWriteAll(es...)
	}
	old.insert(newEntity("big", "e", nearOneMiB()))
	want = append(want, k("big", "e"))
	slices.Sort(want)
	// Strip the index attributes: these are the items the earlier layout
	// wrote.
	stripped := 0
	for _, pk := range []string{"m", "", "b", "z", "k", "big"} {
		for _, it := range old.rawItems(pk) {
			if _, ok := it[attrOrder]; !ok {
				continue
			}
			_, err := old.s.db.UpdateItem(old.ctx, &dynamodb.UpdateItemInput{
				TableName: aws.String(phys), Key: keyItem(stringAttr(it, attrPartitionKey), stringAttr(it, attrRowKey)),
				UpdateExpression:         aws.String("REMOVE #s, #o"),
				ExpressionAttributeNames: map[string]string{"#s": attrShard, "#o": attrOrder},
			})
			if err != nil {
				t.Fatal(err)
			}
			stripped++
		}
	}
	if stripped != len(want) {
		t.Fatalf("stripped %d items; want one per entity, %d", stripped, len(want))
	}

	// The store reads the old table by Scan.
	env := old
	got, _ := pages(t, env, store.Query{}, 3)
	slices.SortFunc(got, func(a, b *model.Entity) int {
		return strings.Compare(k(a.PartitionKey, a.RowKey), k(b.PartitionKey, b.RowKey))
	})
	wantOrder(t, got, want)

	rep, err := env.s.MoveToShared(env.ctx, env.account, env.table, CopyOptions{})
	if err != nil || !rep.Moved {
		t.Fatalf("MoveToShared: %+v, %v", rep, err)
	}
	for _, top := range []int{1, 4, 1000} {
		got, _ := pages(t, env, store.Query{}, top)
		wantOrder(t, got, want)
		for _, e := range got {
			if e.PartitionKey != "big" && e.Properties["V"].Str != e.PartitionKey+e.RowKey {
				t.Fatalf("entity %q/%q reads back as %v", e.PartitionKey, e.RowKey, e.Properties)
			}
		}
	}
	// The index serves a range by reading the range only.
	keys := model.KeyRange{PartitionKey: model.Bounds{Lower: &model.Bound{Value: "k", Inclusive: true}, Upper: &model.Bound{Value: "m"}}}
	page, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{Keys: keys, Top: 1000})
	if err != nil || len(page.Entities) != 3 || page.ItemsRead != 3 {
		t.Fatalf("range [k, m): %q read %d items, %v; want 3 entities and 3 items", sortedKeys(page.Entities), page.ItemsRead, err)
	}
}

// FuzzOrderEncoding holds the index encoding to the key order: $o never
// orders two keys against their order (ties only when truncated), and the
// bounds a query puts on $o admit every key the query can match.
func FuzzOrderEncoding(f *testing.F) {
	f.Add("a", "", "ab", "x", "a", "")
	f.Add("", "", "", "r", "", "q")
	f.Add(strings.Repeat("k", 1020), "rrrrr1", strings.Repeat("k", 1020), "rrrrr0", strings.Repeat("k", 1021), "")
	f.Add("p\u00e9", "1", "p\uffff", "0", "p\u00e9", "0")
	f.Fuzz(func(t *testing.T, pk1, rk1, pk2, rk2, bpk, brk string) {
		for _, k := range []struct {
			v   string
			row bool
		}{{pk1, false}, {rk1, true}, {pk2, false}, {rk2, true}, {bpk, false}, {brk, true}} {
			if model.ValidateKey(k.v, k.row) != nil || !k.row && len(k.v) > maxHashKeyBytes || k.row && len(k.v) > maxRangeKeyBytes {
				return
			}
		}
		enc := func(pk, rk string) (string, bool) {
			full := fullOrderKey(encodeKey(pk), encodeKey(rk))
			return string(truncOrder(full)), len(full) > maxOrderBytes
		}
		o1, cut1 := enc(pk1, rk1)
		o2, cut2 := enc(pk2, rk2)
		less := pk1 < pk2 || pk1 == pk2 && rk1 < rk2
		switch {
		case less && o1 > o2:
			t.Fatalf("(%q, %q) < (%q, %q) but its encoding sorts after", pk1, rk1, pk2, rk2)
		case less && o1 == o2 && !(cut1 && cut2):
			t.Fatalf("(%q, %q) and (%q, %q) tie untruncated", pk1, rk1, pk2, rk2)
		}
		for _, lower := range []*model.Bound{nil, {Value: bpk}, {Value: bpk, Inclusive: true}} {
			for _, upper := range []*model.Bound{nil, {Value: bpk}, {Value: bpk, Inclusive: true}} {
				for _, after := range []*store.Cursor{nil, {PartitionKey: bpk, RowKey: brk}} {
					pkb := model.Bounds{Lower: lower, Upper: upper}
					var cur *cursorKeys
					if after != nil {
						cur = &cursorKeys{pk: encodeKey(after.PartitionKey), rk: encodeKey(after.RowKey)}
					}
					lo, hi, empty := orderBounds(testLoc, pkb, cur)
					matches := pkb.Contains(pk1) && (after == nil || pk1 > after.PartitionKey || pk1 == after.PartitionKey && rk1 > after.RowKey)
					if !matches {
						continue
					}
					if empty || lo != nil && o1 < string(lo) || hi != nil && o1 > string(hi) {
						t.Fatalf("(%q, %q) matches %+v after %+v but lies outside [%q, %q] (empty %v)", pk1, rk1, pkb, after, lo, hi, empty)
					}
				}
			}
		}
	})
}
