package migrate

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
)

// listSource is a Source that only lists tables (or fails to).
type listSource struct {
	names []string
	err   error
}

func (s listSource) Tables(context.Context) ([]string, error) { return s.names, s.err }
func (listSource) ReadPage(context.Context, string, PageRequest) (Page, error) {
	return Page{}, errors.New("not readable")
}
func (listSource) SplitsRanges() bool { return false }
func (listSource) Describe() string   { return "list source" }

func TestSelectTables(t *testing.T) {
	t.Parallel()
	errList := &azcore.ResponseError{StatusCode: http.StatusForbidden, ErrorCode: "AuthorizationPermissionMismatch"}
	errDown := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	tests := []struct {
		name     string
		src      listSource
		selected []string
		want     []string
		wantErr  string
	}{
		{"all tables", listSource{names: []string{"Orders", "Users"}}, nil, []string{"Orders", "Users"}, ""},
		{"selection takes the source's case", listSource{names: []string{"Orders", "Users"}}, []string{"users"}, []string{"Users"}, ""},
		{"a table named twice counts once", listSource{names: []string{"Orders"}}, []string{"orders", "ORDERS"}, []string{"Orders"}, ""},
		{"unknown table", listSource{names: []string{"Orders"}}, []string{"Nope"}, nil, `table "Nope" is not in list source`},
		{"unlistable source takes the selection", listSource{err: errList}, []string{"orders", "Orders"}, []string{"orders"}, ""},
		{"unlistable source without a selection", listSource{err: errList}, nil, nil, "name the tables with -tables"},
		{"unreachable source: no hint at -tables", listSource{err: errDown}, nil, nil, "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SelectTables(context.Background(), tt.src, tt.selected)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || (tt.src.err == errDown && strings.Contains(err.Error(), "-tables")) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("SelectTables = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
