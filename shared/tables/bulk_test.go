package tables

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// TestReplaceEntities: decoded entities are written as Insert Or Replace
// with one new Timestamp, the caller's entities untouched, and refused
// under Batch's rules (validation, one partition, no key twice), naming
// the entity and writing nothing.
func TestReplaceEntities(t *testing.T) {
	t.Parallel()
	fixed := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newBoltService(t, func() time.Time { return fixed })
	ctx := context.Background()
	sc := Scope{Account: "acct"}
	if _, err := s.CreateTable(ctx, sc, "bulk"); err != nil {
		t.Fatal(err)
	}
	old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	entity := func(pk, rk string) *model.Entity {
		return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: old, Properties: map[string]edm.Value{"N": edm.NewInt32(1)}}
	}
	in := []*model.Entity{entity("p", "a"), entity("p", "b")}
	if err := s.ReplaceEntities(ctx, sc, "bulk", in); err != nil {
		t.Fatal(err)
	}
	for _, e := range in {
		if !e.Timestamp.Equal(old) {
			t.Errorf("caller's entity %s changed: %v", e.RowKey, e.Timestamp)
		}
		got, err := s.GetEntity(ctx, sc, "bulk", e.PartitionKey, e.RowKey)
		if err != nil || !got.Timestamp.Equal(fixed) {
			t.Fatalf("GetEntity %s = %v, %v; want Timestamp %v", e.RowKey, got, err, fixed)
		}
	}
	bad := entity("p", "c")
	bad.Properties["bad name"] = edm.NewInt32(1)
	for name, tc := range map[string]struct {
		in    []*model.Entity
		index int
		code  apierr.Code
	}{
		"invalid":        {[]*model.Entity{entity("p", "x"), bad}, 1, apierr.PropertyNameInvalid},
		"two partitions": {[]*model.Entity{entity("p", "x"), entity("q", "x")}, 1, apierr.CommandsInBatchActOnDifferentPartitions},
		"key twice":      {[]*model.Entity{entity("p", "x"), entity("p", "x")}, 1, apierr.InvalidDuplicateRow},
		"missing table":  {[]*model.Entity{entity("p", "x")}, 0, apierr.TableNotFound},
		"over 100":       {make([]*model.Entity, 101), 0, apierr.InvalidInput},
		"no entities":    {nil, 0, apierr.InvalidInput},
	} {
		t.Run(name, func(t *testing.T) {
			table := "bulk"
			if name == "missing table" {
				table = "nosuchtable"
			}
			err := s.ReplaceEntities(ctx, sc, table, tc.in)
			var be *BatchError
			if !errors.As(err, &be) || be.Index != tc.index || be.APIError().Code != tc.code {
				t.Fatalf("ReplaceEntities = %v, want operation %d: %s", err, tc.index, tc.code)
			}
			if _, err := s.GetEntity(ctx, sc, "bulk", "p", "x"); err == nil {
				t.Fatalf("an entity of a refused transaction was written")
			}
		})
	}
}

// TestRestoreEntities: restored entities keep their own Timestamps (so
// their ETags), and one without a Timestamp is refused, writing nothing.
func TestRestoreEntities(t *testing.T) {
	t.Parallel()
	s := newBoltService(t, func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) })
	ctx := context.Background()
	sc := Scope{Account: "acct"}
	if _, err := s.CreateTable(ctx, sc, "restore"); err != nil {
		t.Fatal(err)
	}
	a := time.Date(2001, 1, 1, 0, 0, 0, 100, time.UTC)
	b := time.Date(2002, 2, 2, 0, 0, 0, 0, time.UTC)
	in := []*model.Entity{
		{PartitionKey: "p", RowKey: "a", Timestamp: a, Properties: map[string]edm.Value{"N": edm.NewInt32(1)}},
		{PartitionKey: "p", RowKey: "b", Timestamp: b, Properties: map[string]edm.Value{}},
	}
	if err := s.RestoreEntities(ctx, sc, "restore", in); err != nil {
		t.Fatal(err)
	}
	for _, want := range in {
		got, err := s.GetEntity(ctx, sc, "restore", want.PartitionKey, want.RowKey)
		if err != nil || !got.Timestamp.Equal(want.Timestamp) {
			t.Errorf("GetEntity %s = %v, %v; want Timestamp %v", want.RowKey, got, err, want.Timestamp)
		}
	}
	noTimestamp := []*model.Entity{{PartitionKey: "p", RowKey: "c", Properties: map[string]edm.Value{}}}
	var be *BatchError
	if err := s.RestoreEntities(ctx, sc, "restore", noTimestamp); !errors.As(err, &be) || be.Index != 0 {
		t.Errorf("RestoreEntities without a Timestamp = %v; want a BatchError for entity 0", err)
	}
	if _, err := s.GetEntity(ctx, sc, "restore", "p", "c"); err == nil {
		t.Error("the refused entity was written")
	}
}
