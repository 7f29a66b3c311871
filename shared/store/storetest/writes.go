package storetest

import (
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// testConditions runs every write kind under every If-Match condition
// against a present and an absent entity.
func (s suite) testConditions(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()

	type stored int
	const (
		absent stored = iota
		present
	)
	cases := []struct {
		name    string
		kind    store.OpKind
		cond    store.CondKind
		state   stored
		staleTS bool  // CondTimestamp with a Timestamp other than the stored one
		wantErr error // nil: the op applies
	}{
		{"InsertAbsent", store.OpInsert, store.CondNone, absent, false, nil},
		{"InsertPresent", store.OpInsert, store.CondNone, present, false, store.ErrEntityExists},
		{"InsertIgnoresCondExists", store.OpInsert, store.CondExists, absent, false, nil},
		{"InsertIgnoresCondTimestamp", store.OpInsert, store.CondTimestamp, absent, true, nil},
		{"InsertPresentCondExists", store.OpInsert, store.CondExists, present, false, store.ErrEntityExists},

		{"ReplaceNoneAbsentUpserts", store.OpReplace, store.CondNone, absent, false, nil},
		{"ReplaceNonePresent", store.OpReplace, store.CondNone, present, false, nil},
		{"ReplaceExistsPresent", store.OpReplace, store.CondExists, present, false, nil},
		{"ReplaceExistsAbsent", store.OpReplace, store.CondExists, absent, false, store.ErrEntityNotFound},
		{"ReplaceTimestampMatch", store.OpReplace, store.CondTimestamp, present, false, nil},
		{"ReplaceTimestampStale", store.OpReplace, store.CondTimestamp, present, true, store.ErrConditionFailed},
		{"ReplaceTimestampAbsent", store.OpReplace, store.CondTimestamp, absent, false, store.ErrEntityNotFound},

		{"MergeNoneAbsentUpserts", store.OpMerge, store.CondNone, absent, false, nil},
		{"MergeNonePresent", store.OpMerge, store.CondNone, present, false, nil},
		{"MergeExistsPresent", store.OpMerge, store.CondExists, present, false, nil},
		{"MergeExistsAbsent", store.OpMerge, store.CondExists, absent, false, store.ErrEntityNotFound},
		{"MergeTimestampMatch", store.OpMerge, store.CondTimestamp, present, false, nil},
		{"MergeTimestampStale", store.OpMerge, store.CondTimestamp, present, true, store.ErrConditionFailed},
		{"MergeTimestampAbsent", store.OpMerge, store.CondTimestamp, absent, false, store.ErrEntityNotFound},

		{"DeleteNonePresent", store.OpDelete, store.CondNone, present, false, nil},
		{"DeleteNoneAbsent", store.OpDelete, store.CondNone, absent, false, store.ErrEntityNotFound},
		{"DeleteExistsPresent", store.OpDelete, store.CondExists, present, false, nil},
		{"DeleteExistsAbsent", store.OpDelete, store.CondExists, absent, false, store.ErrEntityNotFound},
		{"DeleteTimestampMatch", store.OpDelete, store.CondTimestamp, present, false, nil},
		{"DeleteTimestampStale", store.OpDelete, store.CondTimestamp, present, true, store.ErrConditionFailed},
		{"DeleteTimestampAbsent", store.OpDelete, store.CondTimestamp, absent, false, store.ErrEntityNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pk := c.name // one partition per case keeps the cases apart
			var old *model.Entity
			if c.state == present {
				old = newEntity(pk, "rk", props{"Kept": edm.NewString("old"), "Sent": edm.NewInt32(1)})
				f.insert(table, old)
			}
			sent := newEntity(pk, "rk", props{"Sent": edm.NewInt32(2), "New": edm.NewBoolean(true)})
			op := store.Op{Kind: c.kind, Entity: sent, Cond: c.cond}
			if c.cond == store.CondTimestamp {
				op.Timestamp = timestampBase.Add(-time.Hour) // matches nothing
				if old != nil && !c.staleTS {
					op.Timestamp = old.Timestamp
				}
			}
			err := f.write(table, op)
			if c.wantErr != nil {
				wantOpError(t, err, 0, c.wantErr)
				if old != nil {
					f.wantStored(table, old)
				} else {
					f.wantAbsent(table, pk, "rk")
				}
				return
			}
			if err != nil {
				t.Fatalf("Write(%s, cond %d) = %v; want success", c.kind, c.cond, err)
			}
			switch {
			case c.kind == store.OpDelete:
				f.wantAbsent(table, pk, "rk")
			case c.kind == store.OpMerge && old != nil:
				want := sent.Clone()
				want.Properties["Kept"] = old.Properties["Kept"]
				f.wantStored(table, want)
			default:
				f.wantStored(table, sent)
			}
		})
	}
}

// testWriteSemantics checks what each kind does to the stored properties.
func (s suite) testWriteSemantics(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()
	blob := []byte{0, 1, 2, 254, 255}

	t.Run("InsertThenGet", func(t *testing.T) {
		e := newEntity("p", "insert", props{"S": edm.NewString("x"), "B": edm.NewBinary(blob), "I": edm.NewInt64(-5)})
		f.insert(table, e)
		f.wantStored(table, e)
		if _, err := f.get(table, "p", "missing"); !errors.Is(err, store.ErrEntityNotFound) {
			t.Errorf("GetEntity(missing) = %v; want ErrEntityNotFound", err)
		}
		if _, err := f.get(table, "missing", "insert"); !errors.Is(err, store.ErrEntityNotFound) {
			t.Errorf("GetEntity(missing partition) = %v; want ErrEntityNotFound", err)
		}
	})

	t.Run("EntityWithoutProperties", func(t *testing.T) {
		e := newEntity("p", "bare", nil)
		f.insert(table, e)
		got := f.mustGet(table, "p", "bare")
		if len(got.Properties) != 0 || !got.Timestamp.Equal(e.Timestamp) {
			t.Errorf("bare entity came back as %+v", got)
		}
	})

	t.Run("ReplaceDropsOldProperties", func(t *testing.T) {
		old := newEntity("p", "replace", props{"A": edm.NewInt32(1), "B": edm.NewString("b")})
		f.insert(table, old)
		repl := newEntity("p", "replace", props{"C": edm.NewDouble(2.5)})
		f.mustWrite(table, store.Op{Kind: store.OpReplace, Entity: repl, Cond: store.CondExists})
		f.wantStored(table, repl)
	})

	t.Run("MergeKeepsOverwritesAndRetimes", func(t *testing.T) {
		old := newEntity("p", "merge", props{
			"A": edm.NewInt32(1), "B": edm.NewString("b"), "C": edm.NewBinary(blob),
			// Same name, another type: a merge replaces the typed value.
			"T": edm.NewInt32(7),
		})
		f.insert(table, old)
		patch := newEntity("p", "merge", props{"B": edm.NewString("B2"), "D": edm.NewBoolean(true), "T": edm.NewInt64(7)})
		f.mustWrite(table, store.Op{Kind: store.OpMerge, Entity: patch, Cond: store.CondTimestamp, Timestamp: old.Timestamp})
		want := newEntity("p", "merge", props{
			"A": edm.NewInt32(1), "B": edm.NewString("B2"), "C": edm.NewBinary(blob), "D": edm.NewBoolean(true), "T": edm.NewInt64(7),
		})
		want.Timestamp = patch.Timestamp
		f.wantStored(table, want)

		// The new Timestamp is the one conditions now match.
		stale := store.Op{Kind: store.OpMerge, Entity: newEntity("p", "merge", nil), Cond: store.CondTimestamp, Timestamp: old.Timestamp}
		wantOpError(t, f.write(table, stale), 0, store.ErrConditionFailed)
		fresh := store.Op{Kind: store.OpMerge, Entity: newEntity("p", "merge", nil), Cond: store.CondTimestamp, Timestamp: patch.Timestamp}
		if err := f.write(table, fresh); err != nil {
			t.Fatalf("merge with the new Timestamp: %v", err)
		}
		want.Timestamp = fresh.Entity.Timestamp
		f.wantStored(table, want) // an empty merge only moves the Timestamp
	})

	t.Run("TimestampOnlyIncreases", func(t *testing.T) {
		// Another process whose clock lags writes over a version stamped
		// later: the store moves the new Timestamp past the stored one and
		// hands it back in op.Entity, so Timestamps only increase and no
		// two versions share one (and with it an ETag).
		ahead := nextTimestamp().Add(time.Hour)
		e := newEntity("p", "clocks", props{"A": edm.NewInt32(1)})
		e.Timestamp = ahead
		f.insert(table, e)
		prev := e.Timestamp
		for _, c := range []struct {
			name string
			op   store.Op
		}{
			{"Upsert", store.Op{Kind: store.OpReplace, Entity: newEntity("p", "clocks", props{"B": edm.NewInt32(2)})}},
			{"ReplaceIfExists", store.Op{Kind: store.OpReplace, Cond: store.CondExists, Entity: newEntity("p", "clocks", props{"C": edm.NewInt32(3)})}},
			{"MergeUpsert", store.Op{Kind: store.OpMerge, Entity: newEntity("p", "clocks", props{"D": edm.NewInt32(4)})}},
			{"MergeIfMatch", store.Op{Kind: store.OpMerge, Cond: store.CondTimestamp, Entity: newEntity("p", "clocks", props{"E": edm.NewInt32(5)})}},
			{"ReplaceIfMatch", store.Op{Kind: store.OpReplace, Cond: store.CondTimestamp, Entity: newEntity("p", "clocks", props{"F": edm.NewInt32(6)})}},
		} {
			op := c.op
			op.Timestamp = prev // the If-Match ones match the stored version
			f.mustWrite(table, op)
			got := f.mustGet(table, "p", "clocks")
			if !op.Entity.Timestamp.After(prev) || !got.Timestamp.Equal(op.Entity.Timestamp) {
				t.Fatalf("%s: stored Timestamp %v, op.Entity says %v; want equal and after %v",
					c.name, got.Timestamp, op.Entity.Timestamp, prev)
			}
			prev = got.Timestamp
		}
		// A transaction: the entity it replaces moves past the stored
		// version; each stored Timestamp is the one op.Entity reports.
		ts := nextTimestamp()
		repl := newEntity("p", "clocks", nil)
		fresh := newEntity("p", "clocks-new", nil)
		repl.Timestamp, fresh.Timestamp = ts, ts
		f.mustWrite(table, store.Op{Kind: store.OpReplace, Entity: repl}, store.Op{Kind: store.OpInsert, Entity: fresh})
		if !repl.Timestamp.After(prev) {
			t.Fatalf("batch replace: Timestamp %v, want after %v", repl.Timestamp, prev)
		}
		f.wantStored(table, repl)
		f.wantStored(table, fresh)
	})

	t.Run("DeleteThenInsertAgain", func(t *testing.T) {
		e := newEntity("p", "again", props{"A": edm.NewInt32(1)})
		f.insert(table, e)
		f.mustWrite(table, store.Op{Kind: store.OpDelete, Entity: newEntity("p", "again", nil), Cond: store.CondExists})
		f.wantAbsent(table, "p", "again")
		e2 := newEntity("p", "again", props{"B": edm.NewInt32(2)})
		f.insert(table, e2)
		f.wantStored(table, e2)
	})

	t.Run("MultiOpAllApply", func(t *testing.T) {
		// 100 operations, Azure's most in one change set, one partition.
		const pk = "multi"
		var ops []store.Op
		var want []*model.Entity
		var gone []string
		for i := range 25 {
			rk := func(kind string) string { return fmt.Sprintf("%s%02d", kind, i) }
			for _, kind := range []string{"replace", "merge", "delete"} {
				f.insert(table, newEntity(pk, rk(kind), props{"Old": edm.NewInt32(int32(i))}))
			}
			ins := newEntity(pk, rk("insert"), props{"N": edm.NewInt32(int32(i))})
			rep := newEntity(pk, rk("replace"), props{"N": edm.NewInt32(int32(i))})
			mrg := newEntity(pk, rk("merge"), props{"N": edm.NewInt32(int32(i))})
			ops = append(ops,
				store.Op{Kind: store.OpInsert, Entity: ins},
				store.Op{Kind: store.OpReplace, Entity: rep, Cond: store.CondExists},
				store.Op{Kind: store.OpMerge, Entity: mrg, Cond: store.CondExists},
				store.Op{Kind: store.OpDelete, Entity: newEntity(pk, rk("delete"), nil), Cond: store.CondExists},
			)
			merged := mrg.Clone()
			merged.Properties["Old"] = edm.NewInt32(int32(i))
			want = append(want, ins, rep, merged)
			gone = append(gone, rk("delete"))
		}
		f.mustWrite(table, ops...)
		for _, e := range want {
			f.wantStored(table, e)
		}
		for _, rk := range gone {
			f.wantAbsent(table, pk, rk)
		}
	})
}

// testAtomicity checks that a multi-op Write that fails applies nothing and
// names the failing op.
func (s suite) testAtomicity(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()
	wide := make(props, 252)
	for i := range 252 {
		wide[fmt.Sprintf("P%03d", i)] = edm.NewInt32(int32(i))
	}

	cases := []struct {
		name      string
		failAt    int
		wantErr   error
		buildFail func(pk string, pre []*model.Entity) store.Op
	}{
		{"InsertExistingLast", 3, store.ErrEntityExists, func(pk string, pre []*model.Entity) store.Op {
			return store.Op{Kind: store.OpInsert, Entity: newEntity(pk, pre[0].RowKey, nil)}
		}},
		{"ReplaceMissingFirst", 0, store.ErrEntityNotFound, func(pk string, _ []*model.Entity) store.Op {
			return store.Op{Kind: store.OpReplace, Entity: newEntity(pk, "absent", nil), Cond: store.CondExists}
		}},
		{"MergeStaleMiddle", 2, store.ErrConditionFailed, func(pk string, pre []*model.Entity) store.Op {
			return store.Op{Kind: store.OpMerge, Entity: newEntity(pk, pre[1].RowKey, nil), Cond: store.CondTimestamp, Timestamp: timestampBase}
		}},
		{"DeleteMissingMiddle", 1, store.ErrEntityNotFound, func(pk string, _ []*model.Entity) store.Op {
			return store.Op{Kind: store.OpDelete, Entity: newEntity(pk, "absent", nil)}
		}},
		{"DeleteStaleLast", 3, store.ErrConditionFailed, func(pk string, pre []*model.Entity) store.Op {
			return store.Op{Kind: store.OpDelete, Entity: newEntity(pk, pre[0].RowKey, nil), Cond: store.CondTimestamp, Timestamp: timestampBase}
		}},
		{"MergeTooManyPropertiesMiddle", 2, store.ErrTooManyProperties, func(pk string, pre []*model.Entity) store.Op {
			return store.Op{Kind: store.OpMerge, Entity: newEntity(pk, pre[2].RowKey, props{"OneMore": edm.NewInt32(1)}), Cond: store.CondExists}
		}},
		// Ops no caller should build: refused by Op.Check before anything
		// is applied.
		{"UnknownKindLast", 3, store.ErrInvalidOp, func(pk string, _ []*model.Entity) store.Op {
			return store.Op{Kind: store.OpKind(99), Entity: newEntity(pk, "odd", nil)}
		}},
		{"UnknownConditionFirst", 0, store.ErrInvalidOp, func(pk string, _ []*model.Entity) store.Op {
			return store.Op{Kind: store.OpInsert, Entity: newEntity(pk, "odd", nil), Cond: store.CondKind(9)}
		}},
		{"NoEntityMiddle", 1, store.ErrInvalidOp, func(string, []*model.Entity) store.Op {
			return store.Op{Kind: store.OpDelete}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pk := c.name
			pre := []*model.Entity{
				newEntity(pk, "pre0", props{"V": edm.NewString("zero")}),
				newEntity(pk, "pre1", props{"V": edm.NewString("one")}),
				newEntity(pk, "wide", maps.Clone(wide)),
			}
			f.insert(table, pre...)
			// Four ops that would each succeed, with the failing one put at
			// failAt in place of one of them.
			ok := []store.Op{
				{Kind: store.OpInsert, Entity: newEntity(pk, "new0", props{"V": edm.NewInt32(0)})},
				{Kind: store.OpReplace, Entity: newEntity(pk, "pre0", props{"V": edm.NewString("replaced")}), Cond: store.CondExists},
				{Kind: store.OpMerge, Entity: newEntity(pk, "pre1", props{"W": edm.NewString("merged")})},
				{Kind: store.OpInsert, Entity: newEntity(pk, "new1", nil)},
			}
			ops := append([]store.Op(nil), ok...)
			fail := c.buildFail(pk, pre)
			ops[c.failAt] = fail
			// The replaced op's entity must not collide with the failing one.
			for i, op := range ops {
				if i != c.failAt && fail.Entity != nil && keyOf(op.Entity) == keyOf(fail.Entity) {
					ops[i] = store.Op{Kind: store.OpInsert, Entity: newEntity(pk, fmt.Sprintf("new%d", 10+i), nil)}
				}
			}
			wantOpError(t, f.write(table, ops...), c.failAt, c.wantErr)
			for _, e := range pre {
				f.wantStored(table, e)
			}
			for i, op := range ops {
				if op.Kind == store.OpInsert && i != c.failAt {
					f.wantAbsent(table, pk, op.Entity.RowKey)
				}
			}
		})
	}
}

// testMergeLimits checks that a merge whose result breaks the data model's
// limits (252 custom properties, 1 MiB) fails and changes nothing, while
// merges that stay within them apply.
func (s suite) testMergeLimits(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()

	t.Run("TooManyProperties", func(t *testing.T) {
		p := make(props, 252)
		for i := range 252 {
			p[fmt.Sprintf("Prop%03d", i)] = edm.NewInt32(int32(i))
		}
		e := newEntity("count", "e", p)
		f.insert(table, e)
		extra := newEntity("count", "e", props{"Prop000": edm.NewInt32(-1), "Extra": edm.NewInt32(1)})
		wantOpError(t, f.write(table, store.Op{Kind: store.OpMerge, Entity: extra, Cond: store.CondExists}), 0, store.ErrTooManyProperties)
		wantOpError(t, f.write(table, store.Op{Kind: store.OpMerge, Entity: extra}), 0, store.ErrTooManyProperties)
		f.wantStored(table, e)

		overwrite := newEntity("count", "e", props{"Prop000": edm.NewString("now a string"), "Prop251": edm.NewInt64(1)})
		f.mustWrite(table, store.Op{Kind: store.OpMerge, Entity: overwrite, Cond: store.CondTimestamp, Timestamp: e.Timestamp})
		want := e.Clone()
		maps.Copy(want.Properties, overwrite.Properties)
		want.Timestamp = overwrite.Timestamp
		f.wantStored(table, want)
	})

	t.Run("EntityTooLarge", func(t *testing.T) {
		// 16 binaries of 60 KiB are about 983,000 bytes by Azure's size
		// formula; two more break 1 MiB.
		p := make(props)
		for i := range 16 {
			p[fmt.Sprintf("Bin%02d", i)] = edm.NewBinary(pattern(60<<10, i))
		}
		e := newEntity("size", "e", p)
		f.insert(table, e)
		grow := newEntity("size", "e", props{"More1": edm.NewBinary(pattern(60<<10, 100)), "More2": edm.NewBinary(pattern(60<<10, 101))})
		wantOpError(t, f.write(table, store.Op{Kind: store.OpMerge, Entity: grow}), 0, store.ErrEntityTooLarge)
		f.wantStored(table, e)

		same := newEntity("size", "e", props{"Bin00": edm.NewBinary(pattern(60<<10, 200))})
		f.mustWrite(table, store.Op{Kind: store.OpMerge, Entity: same, Cond: store.CondExists})
		want := e.Clone()
		maps.Copy(want.Properties, same.Properties)
		want.Timestamp = same.Timestamp
		f.wantStored(table, want)
	})
}

// pattern returns n deterministic bytes that differ by seed.
func pattern(n, seed int) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}
