package boltstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestStoredValuesMatchesGet looks keys up with one cursor in the orders a
// batch can name them (ascending through gaps, descending, repeated, before
// the first and after the last stored key, in a bucket of several pages)
// and compares every answer with Bucket.Get.
func TestStoredValuesMatchesGet(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.CreateTable(context.Background(), "acct", "tbl"); err != nil {
		t.Fatal(err)
	}
	key := func(n int) []byte { return entityKey("p", fmt.Sprintf("%05d", n)) }
	// Every third key is stored, enough of them to span several pages.
	if err := s.update(func(tx *bolt.Tx) error {
		b := entityBucket(tx, "acct", "tbl")
		for n := 3; n < 3000; n += 3 {
			if err := b.Put(key(n), []byte(fmt.Sprint(n))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ascending := make([]int, 0, 3100)
	for n := range 3100 {
		ascending = append(ascending, n)
	}
	descending := make([]int, 0, 3100)
	for n := 3099; n >= 0; n-- {
		descending = append(descending, n)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]int, 500)
	for i := range random {
		random[i] = rng.IntN(3100)
	}
	for _, tc := range []struct {
		name string
		keys []int
	}{
		{"ascending", ascending},
		{"descending", descending},
		{"random", random},
		{"repeated", []int{5, 6, 6, 6, 9, 9, 3, 3}},
		{"after the last", []int{2999, 3000, 5000, 4000, 2998}},
		{"before the first", []int{0, 1, 2, 3, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := s.db.View(func(tx *bolt.Tx) error {
				b := entityBucket(tx, "acct", "tbl")
				stored := storedValues{c: b.Cursor()}
				for _, n := range tc.keys {
					if got, want := stored.get(key(n)), b.Get(key(n)); string(got) != string(want) || (got == nil) != (want == nil) {
						return fmt.Errorf("key %d: %q, Get %q", n, got, want)
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestPlanWriteSharesBuffers checks that the keys and values planWrite
// packs into shared buffers are each op's own: the same bytes as encoding
// the op alone, with no room to append into a neighbour.
func TestPlanWriteSharesBuffers(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)
	ops := []store.Op{
		{Kind: store.OpInsert, Entity: &model.Entity{PartitionKey: "p", RowKey: "1", Timestamp: ts,
			Properties: map[string]edm.Value{"A": edm.NewString("short")}}},
		{Kind: store.OpDelete, Entity: &model.Entity{PartitionKey: "p", RowKey: "2"}},
		// Larger than the first, so the value buffer grows after it.
		{Kind: store.OpReplace, Entity: &model.Entity{PartitionKey: "p", RowKey: "3", Timestamp: ts,
			Properties: map[string]edm.Value{"B": edm.NewString(string(make([]byte, 4000))), "C": edm.NewInt64(7)}}},
		{Kind: store.OpMerge, Entity: &model.Entity{PartitionKey: "p", RowKey: "4", Timestamp: ts}},
		{Kind: store.OpInsert, Entity: &model.Entity{PartitionKey: "q", RowKey: "5", Timestamp: ts,
			Properties: map[string]edm.Value{"D": edm.NewBoolean(true)}}},
	}
	plan, err := planWrite(ops)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range plan {
		e := ops[i].Entity
		if string(p.key) != string(entityKey(e.PartitionKey, e.RowKey)) || cap(p.key) != len(p.key) {
			t.Errorf("op %d: key %q (cap %d)", i, p.key, cap(p.key))
		}
		switch ops[i].Kind {
		case store.OpInsert, store.OpReplace:
			got, err := decodeEntity([]byte(e.PartitionKey), []byte(e.RowKey), p.value)
			if err != nil || cap(p.value) != len(p.value) || !got.Timestamp.Equal(e.Timestamp) || len(got.Properties) != len(e.Properties) {
				t.Errorf("op %d: value decodes to %+v, %v (cap %d of %d)", i, got, err, cap(p.value), len(p.value))
			}
			for name, v := range e.Properties {
				if !got.Properties[name].Equal(v) {
					t.Errorf("op %d: property %s = %#v, want %#v", i, name, got.Properties[name], v)
				}
			}
		default:
			if p.value != nil {
				t.Errorf("op %d (%s): value %q, want none", i, ops[i].Kind, p.value)
			}
		}
	}
}

func TestPlanWriteRefusesInvalidType(t *testing.T) {
	t.Parallel()
	ops := []store.Op{
		{Kind: store.OpInsert, Entity: &model.Entity{PartitionKey: "p", RowKey: "1", Properties: map[string]edm.Value{"A": edm.NewInt32(1)}}},
		{Kind: store.OpInsert, Entity: &model.Entity{PartitionKey: "p", RowKey: "2", Properties: map[string]edm.Value{"B": {Type: 99}}}},
	}
	_, err := planWrite(ops)
	var oe *store.OpError
	if !errors.As(err, &oe) || oe.Index != 1 {
		t.Fatalf("planWrite = %v, want an OpError at index 1", err)
	}
}

// TestPlanWriteFindsRepeatedEntities: an entity named twice is refused at
// its second op, whether the keys before it ascend (no set of keys is kept)
// or not.
func TestPlanWriteFindsRepeatedEntities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		rows    []string
		wantErr int // index of the failing op, or -1
	}{
		{"ascending", []string{"1", "2", "3"}, -1},
		{"out of order", []string{"3", "1", "2"}, -1},
		{"adjacent repeat", []string{"1", "1"}, 1},
		{"repeat after ascending run", []string{"1", "2", "3", "2"}, 3},
		{"repeat after disorder", []string{"3", "1", "3"}, 2},
		{"repeat of the first, late", []string{"5", "6", "4", "7", "5"}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := make([]store.Op, len(tc.rows))
			for i, rk := range tc.rows {
				ops[i] = store.Op{Kind: store.OpDelete, Entity: &model.Entity{PartitionKey: "p", RowKey: rk}}
			}
			_, err := planWrite(ops)
			var oe *store.OpError
			switch {
			case tc.wantErr < 0 && err != nil:
				t.Fatalf("planWrite = %v, want no error", err)
			case tc.wantErr >= 0 && (!errors.As(err, &oe) || oe.Index != tc.wantErr):
				t.Fatalf("planWrite = %v, want an OpError at index %d", err, tc.wantErr)
			}
		})
	}
}
