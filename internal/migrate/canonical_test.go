package migrate

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

func TestCanonicalDistinguishes(t *testing.T) {
	t.Parallel()
	base := func() *model.Entity {
		return &model.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]edm.Value{"A": edm.NewInt32(1)}}
	}
	variants := map[string]func(e *model.Entity){
		"keys shift":         func(e *model.Entity) { e.PartitionKey, e.RowKey = "pr", "" },
		"other row":          func(e *model.Entity) { e.RowKey = "s" },
		"Int64 not Int32":    func(e *model.Entity) { e.Properties["A"] = edm.NewInt64(1) },
		"Double not Int32":   func(e *model.Entity) { e.Properties["A"] = edm.NewDouble(1) },
		"-0":                 func(e *model.Entity) { e.Properties["A"] = edm.NewDouble(math.Copysign(0, -1)) },
		"+0":                 func(e *model.Entity) { e.Properties["A"] = edm.NewDouble(0) },
		"NaN":                func(e *model.Entity) { e.Properties["A"] = edm.NewDouble(math.NaN()) },
		"string 1":           func(e *model.Entity) { e.Properties["A"] = edm.NewString("1") },
		"guid":               func(e *model.Entity) { e.Properties["A"] = edm.NewGuid("00000000-0000-0000-0000-000000000001") },
		"binary":             func(e *model.Entity) { e.Properties["A"] = edm.NewBinary([]byte{1}) },
		"true":               func(e *model.Entity) { e.Properties["A"] = edm.NewBoolean(true) },
		"date":               func(e *model.Entity) { e.Properties["A"] = edm.NewDateTime(time.Unix(1, 0)) },
		"date one tick on":   func(e *model.Entity) { e.Properties["A"] = edm.NewDateTime(time.Unix(1, 100)) },
		"renamed":            func(e *model.Entity) { e.Properties = map[string]edm.Value{"B": edm.NewInt32(1)} },
		"extra property":     func(e *model.Entity) { e.Properties["B"] = edm.NewString("") },
		"no properties":      func(e *model.Entity) { e.Properties = map[string]edm.Value{} },
		"value spills names": func(e *model.Entity) { e.Properties = map[string]edm.Value{"A": edm.NewString("B")} },
	}
	seen := map[string]string{string(appendCanonical(nil, base())): "base"}
	for name, change := range variants {
		e := base()
		change(e)
		enc := string(appendCanonical(nil, e))
		if other, dup := seen[enc]; dup {
			t.Errorf("%q encodes like %q", name, other)
		}
		seen[enc] = name
	}
}

func TestCanonicalIgnoresTimestampAndOrder(t *testing.T) {
	t.Parallel()
	a := &model.Entity{PartitionKey: "p", RowKey: "r", Timestamp: time.Unix(1, 0), Properties: map[string]edm.Value{"A": edm.NewInt32(1), "B": edm.NewString("x")}}
	b := &model.Entity{PartitionKey: "p", RowKey: "r", Timestamp: time.Unix(2, 0), Properties: map[string]edm.Value{"B": edm.NewString("x"), "A": edm.NewInt32(1)}}
	if !bytes.Equal(appendCanonical(nil, a), appendCanonical(nil, b)) {
		t.Fatal("Timestamp or map order changed the encoding")
	}
	da, _ := entityDigest(a, nil)
	db, _ := entityDigest(b, nil)
	if da != db {
		t.Fatal("digests differ")
	}
}

func TestDigestAddCarries(t *testing.T) {
	t.Parallel()
	d := digest{hi: 1, lo: math.MaxUint64}.add(digest{lo: 1})
	if d != (digest{hi: 2, lo: 0}) {
		t.Fatalf("add = %+v", d)
	}
	x, y, z := digest{3, 9}, digest{7, math.MaxUint64}, digest{1, 5}
	if x.add(y).add(z) != z.add(x).add(y) {
		t.Fatal("add is not order-independent")
	}
}

func TestKeyBucket(t *testing.T) {
	t.Parallel()
	if keyBucket("a", "bc", 1<<16) == keyBucket("ab", "c", 1<<16) {
		// Not impossible in principle, but these two must not collide
		// through the separator.
		t.Fatal("the key separator is ambiguous")
	}
	for _, n := range []int{1, 7, 65536} {
		if b := keyBucket("p", "r", n); b < 0 || b >= n {
			t.Fatalf("keyBucket = %d for %d buckets", b, n)
		}
	}
}
