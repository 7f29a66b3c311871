package batch_test

import (
	"net/http"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
)

func TestOperationAction(t *testing.T) {
	t.Parallel()
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

func TestOperationErrorUnwraps(t *testing.T) {
	t.Parallel()
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
