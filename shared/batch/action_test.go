package batch_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
)

func TestOperationAction(t *testing.T) {
	tests := []struct {
		method  string
		ifMatch string
		want    batch.Action
		name    string
	}{
		{method: http.MethodPost, want: batch.ActionInsert, name: "Insert"},
		{method: http.MethodPut, ifMatch: "*", want: batch.ActionUpdate, name: "Update"},
		{method: http.MethodPut, want: batch.ActionInsertOrReplace, name: "InsertOrReplace"},
		{method: http.MethodPatch, ifMatch: `W/"x"`, want: batch.ActionMerge, name: "Merge"},
		{method: "MERGE", ifMatch: "*", want: batch.ActionMerge, name: "Merge"},
		{method: http.MethodPatch, want: batch.ActionInsertOrMerge, name: "InsertOrMerge"},
		{method: "MERGE", ifMatch: "  ", want: batch.ActionInsertOrMerge, name: "InsertOrMerge"},
		{method: http.MethodDelete, ifMatch: "*", want: batch.ActionDelete, name: "Delete"},
		{method: http.MethodGet, want: batch.ActionRetrieve, name: "Retrieve"},
		{method: "HEAD", want: 0, name: "Action(0)"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" If-Match="+tt.ifMatch, func(t *testing.T) {
			op := batch.Operation{Method: tt.method, Header: http.Header{}}
			if tt.ifMatch != "" {
				op.Header.Set("If-Match", tt.ifMatch)
			}
			if got := op.Action(); got != tt.want || got.String() != tt.name {
				t.Errorf("Action() = %v (%d), want %s (%d)", got, got, tt.name, tt.want)
			}
		})
	}
}

func TestCheckEntityGroup(t *testing.T) {
	ops := func(n int) *batch.Request {
		req := &batch.Request{}
		for i := range n {
			req.Operations = append(req.Operations, batch.Operation{Index: i, ContentID: string(rune('a' + i))})
		}
		return req
	}
	ref := func(table, pk, rk string) batch.EntityRef {
		return batch.EntityRef{Table: table, PartitionKey: pk, RowKey: rk}
	}
	tests := []struct {
		name      string
		refs      []batch.EntityRef
		wantCode  apierr.Code
		wantIndex int
	}{
		{name: "one entity", refs: []batch.EntityRef{ref("t", "p", "1")}},
		{name: "one partition, distinct rows", refs: []batch.EntityRef{ref("t", "p", "1"), ref("T", "p", "2"), ref("t", "p", "")}},
		{name: "empty keys are keys", refs: []batch.EntityRef{ref("t", "", ""), ref("t", "", "x")}},
		{name: "second partition", refs: []batch.EntityRef{ref("t", "p", "1"), ref("t", "p", "2"), ref("t", "q", "3")},
			wantCode: apierr.CommandsInBatchActOnDifferentPartitions, wantIndex: 2},
		{name: "partition keys are case-sensitive", refs: []batch.EntityRef{ref("t", "p", "1"), ref("t", "P", "2")},
			wantCode: apierr.CommandsInBatchActOnDifferentPartitions, wantIndex: 1},
		{name: "second table", refs: []batch.EntityRef{ref("t", "p", "1"), ref("u", "p", "2")},
			wantCode: apierr.CommandsInBatchActOnDifferentPartitions, wantIndex: 1},
		{name: "same entity twice", refs: []batch.EntityRef{ref("t", "p", "1"), ref("t", "p", "2"), ref("t", "p", "1")},
			wantCode: apierr.InvalidDuplicateRow, wantIndex: 2},
		{name: "row keys are case-sensitive", refs: []batch.EntityRef{ref("t", "p", "a"), ref("t", "p", "A")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ops(len(tt.refs)).CheckEntityGroup(tt.refs)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("CheckEntityGroup: %v", err)
				}
				return
			}
			var opErr *batch.OperationError
			if !errors.As(err, &opErr) {
				t.Fatalf("error %v, want an OperationError", err)
			}
			if opErr.Err.Code != tt.wantCode || opErr.Index != tt.wantIndex || opErr.ContentID != string(rune('a'+tt.wantIndex)) {
				t.Errorf("got %s at %d (Content-ID %q), want %s at %d", opErr.Err.Code, opErr.Index, opErr.ContentID, tt.wantCode, tt.wantIndex)
			}
			if opErr.Err.HTTPStatus() != http.StatusBadRequest {
				t.Errorf("status %d, want 400", opErr.Err.HTTPStatus())
			}
		})
	}
	t.Run("refs must match the operations", func(t *testing.T) {
		err := ops(2).CheckEntityGroup([]batch.EntityRef{ref("t", "p", "1")})
		if err == nil {
			t.Fatal("no error for a length mismatch")
		}
		if _, ok := apierr.As(err); ok {
			t.Errorf("a programming error came back as a protocol error: %v", err)
		}
	})
	t.Run("no operations", func(t *testing.T) {
		if err := ops(0).CheckEntityGroup(nil); err != nil {
			t.Errorf("CheckEntityGroup: %v", err)
		}
	})
}

func TestOperationErrorUnwraps(t *testing.T) {
	op := batch.Operation{Index: 3, ContentID: "4"}
	err := error(op.Fail(apierr.New(apierr.EntityAlreadyExists)))
	apiErr, ok := apierr.As(err)
	if !ok || apiErr.Code != apierr.EntityAlreadyExists {
		t.Fatalf("apierr.As(%v) = %v, %v", err, apiErr, ok)
	}
	if got, want := err.Error(), "batch operation 3: EntityAlreadyExists: The specified entity already exists."; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
