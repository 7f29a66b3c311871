package tables

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

func newBoltService(t *testing.T, now func() time.Time) *Service {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := New(st, Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// insert is an Insert Entity of body.
func insert(body string) EntityWrite {
	return EntityWrite{Op: operation.InsertEntity, Body: []byte(body)}
}

// TestBatchSharesOneTimestamp: every entity a transaction writes gets the
// same Timestamp, hence the same ETag, as on Azure; the next write is later.
func TestBatchSharesOneTimestamp(t *testing.T) {
	t.Parallel()
	fixed := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	s := newBoltService(t, func() time.Time { return fixed })
	ctx := context.Background()
	sc := Scope{Account: "acct"}
	if _, err := s.CreateTable(ctx, sc, "batchts"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.WriteEntity(ctx, sc, "batchts", insert(`{"PartitionKey":"p","RowKey":"u"}`)); err != nil {
		t.Fatal(err)
	}
	results, err := s.Batch(ctx, sc, "batchts", []EntityWrite{
		insert(`{"PartitionKey":"p","RowKey":"a"}`),
		insert(`{"PartitionKey":"p","RowKey":"b"}`),
		{Op: operation.MergeEntity, PartitionKey: "p", RowKey: "u", Body: []byte(`{"X":1}`), IfMatch: "*"},
		{Op: operation.InsertOrReplaceEntity, PartitionKey: "p", RowKey: "c", Body: []byte(`{}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	first := results[0].Entity.Timestamp
	for i, r := range results {
		if !r.Entity.Timestamp.Equal(first) {
			t.Errorf("op %d: Timestamp %v, want the transaction's %v", i, r.Entity.Timestamp, first)
		}
		stored, err := s.GetEntity(ctx, sc, "batchts", "p", r.Entity.RowKey)
		if err != nil || !stored.Timestamp.Equal(first) {
			t.Errorf("op %d stored with %v, %v", i, stored, err)
		}
	}
	after, err := s.WriteEntity(ctx, sc, "batchts", insert(`{"PartitionKey":"p","RowKey":"z"}`))
	if err != nil {
		t.Fatal(err)
	}
	if !after.Timestamp.After(first) {
		t.Errorf("a write after the transaction got %v, not after %v", after.Timestamp, first)
	}
}

// TestBatchRefusesRepeatedRows: an entity named twice is 400
// InvalidDuplicateRow at its second operation, whether the RowKeys before
// it ascend or not, and a transaction of distinct rows in any order passes.
func TestBatchRefusesRepeatedRows(t *testing.T) {
	t.Parallel()
	s := newBoltService(t, nil)
	ctx := context.Background()
	sc := Scope{Account: "acct"}
	if _, err := s.CreateTable(ctx, sc, "batchdup"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		rows    []string
		wantErr int // index of the failing op, or -1
	}{
		{"ascending", []string{"a1", "a2", "a3"}, -1},
		{"out of order", []string{"b3", "b1", "b2"}, -1},
		{"adjacent repeat", []string{"c1", "c1"}, 1},
		{"repeat after ascending run", []string{"d1", "d2", "d3", "d2"}, 3},
		{"repeat after disorder", []string{"e3", "e1", "e3"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ops := make([]EntityWrite, len(tc.rows))
			for i, rk := range tc.rows {
				ops[i] = insert(`{"PartitionKey":"p","RowKey":"` + rk + `"}`)
			}
			_, err := s.Batch(ctx, sc, "batchdup", ops)
			if tc.wantErr < 0 {
				if err != nil {
					t.Fatalf("Batch = %v, want success", err)
				}
				return
			}
			be, ok := err.(*BatchError)
			if !ok || be.Index != tc.wantErr || be.APIError().Code != apierr.InvalidDuplicateRow {
				t.Fatalf("Batch = %v, want InvalidDuplicateRow at %d", err, tc.wantErr)
			}
		})
	}
}

// TestEntityWritesInTheStore walks shared/operation's table: each entity
// write becomes the store write its REST operation means (entityWrites),
// with If-Match as its condition where the operation takes one, and every
// other operation is refused. A new entity write operation without its
// store meaning fails here.
func TestEntityWritesInTheStore(t *testing.T) {
	t.Parallel()
	want := map[operation.Operation]store.Op{
		operation.InsertEntity:          {Kind: store.OpInsert},
		operation.UpdateEntity:          {Kind: store.OpReplace, Cond: store.CondExists},
		operation.MergeEntity:           {Kind: store.OpMerge, Cond: store.CondExists},
		operation.InsertOrReplaceEntity: {Kind: store.OpReplace},
		operation.InsertOrMergeEntity:   {Kind: store.OpMerge},
		operation.DeleteEntity:          {Kind: store.OpDelete, Cond: store.CondExists},
	}
	for _, op := range operation.All() {
		w := EntityWrite{Op: op, PartitionKey: "p", RowKey: "r", Body: []byte(`{"PartitionKey":"p","RowKey":"r","V":1}`)}
		// If-Match as operation.Resolve leaves it: absent where the
		// operation requires its absence, "*" elsewhere.
		if op.Info().Request.IfMatch != operation.IfMatchAbsent {
			w.IfMatch = "*"
		}
		got, err := storeOp(Scope{}, w, time.Now())
		if !op.WritesEntity() {
			if ae, ok := apierr.As(err); !ok || ae.Code != apierr.InvalidInput {
				t.Errorf("%s, which writes no entity: %+v, %v; want InvalidInput", op, got, err)
			}
			continue
		}
		wantOp, ok := want[op]
		if !ok {
			t.Errorf("%s writes an entity; this test does not know what it does to the store", op)
			continue
		}
		if err != nil || got.Kind != wantOp.Kind || got.Cond != wantOp.Cond || got.Entity.PartitionKey != "p" || got.Entity.RowKey != "r" {
			t.Errorf("%s: %+v, %v; want %s with condition %d", op, got, err, wantOp.Kind, wantOp.Cond)
		}
		if stamped := !got.Entity.Timestamp.IsZero(); err == nil && stamped != (wantOp.Kind != store.OpDelete) {
			t.Errorf("%s: Timestamp %v", op, got.Entity.Timestamp)
		}
	}
}

// TestConditionalWritesNeedIfMatch: Update, Merge and Delete Entity
// without If-Match are 400 MissingRequiredHeader (Resolve makes the first
// two upserts, so only Delete Entity meets it from a request); an upsert
// ignores what it is given.
func TestConditionalWritesNeedIfMatch(t *testing.T) {
	t.Parallel()
	body := []byte(`{"V":1}`)
	for _, op := range []operation.Operation{operation.UpdateEntity, operation.MergeEntity, operation.DeleteEntity} {
		_, err := storeOp(Scope{}, EntityWrite{Op: op, PartitionKey: "p", RowKey: "r", Body: body}, time.Now())
		if ae, ok := apierr.As(err); !ok || ae.Code != apierr.MissingRequiredHeader {
			t.Errorf("%s without If-Match: %v", op, err)
		}
	}
	got, err := storeOp(Scope{}, EntityWrite{Op: operation.InsertOrMergeEntity, PartitionKey: "p", RowKey: "r", Body: body, IfMatch: "*"}, time.Now())
	if err != nil || got.Cond != store.CondNone {
		t.Errorf("Insert Or Merge with If-Match: %+v, %v", got, err)
	}
}
