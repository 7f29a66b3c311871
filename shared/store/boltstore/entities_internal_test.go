package boltstore

import (
	"errors"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestPlanWriteSharesBuffers checks that the keys and values planWrite
// packs into shared buffers are each op's own: the same bytes as encoding
// the op alone, with no room to append into a neighbour.
func TestPlanWriteSharesBuffers(t *testing.T) {
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
