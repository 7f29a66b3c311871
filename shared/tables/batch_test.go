package tables

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
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
	if _, err := s.InsertEntity(ctx, sc, "batchts", []byte(`{"PartitionKey":"p","RowKey":"u"}`)); err != nil {
		t.Fatal(err)
	}
	results, err := s.Batch(ctx, sc, "batchts", []BatchOp{
		{Kind: BatchInsert, Body: []byte(`{"PartitionKey":"p","RowKey":"a"}`)},
		{Kind: BatchInsert, Body: []byte(`{"PartitionKey":"p","RowKey":"b"}`)},
		{Kind: BatchMerge, PartitionKey: "p", RowKey: "u", Body: []byte(`{"X":1}`), IfMatch: "*"},
		{Kind: BatchUpdate, PartitionKey: "p", RowKey: "c", Body: []byte(`{}`)},
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
	after, err := s.InsertEntity(ctx, sc, "batchts", []byte(`{"PartitionKey":"p","RowKey":"z"}`))
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
	insert := func(rk string) BatchOp {
		return BatchOp{Kind: BatchInsert, Body: []byte(`{"PartitionKey":"p","RowKey":"` + rk + `"}`)}
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
			ops := make([]BatchOp, len(tc.rows))
			for i, rk := range tc.rows {
				ops[i] = insert(rk)
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
