package protocoltest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// sasKeyRange covers a table SAS restricted by spk, srk, epk and erk
// ("Create a service SAS": the range is inclusive and ordered by
// PartitionKey, then RowKey). Entities outside it can be neither read nor
// written, point operations and batch operations alike are refused with
// 403 AuthorizationFailure, and queries return only what lies inside.
//
// The token comes from auth.NewTableSAS only: aztables v1.4.1's
// GetTableSASURL signs the key range but leaves spk, srk, epk and erk out
// of the URL, so no service (Azure included) can verify its signature.
func sasKeyRange(t *testing.T, srv *Server, sc *aztables.ServiceClient, token func(table, perms string) auth.TableSASValues) {
	c := newTable(t, sc, "")
	table := TableName(t, "")
	for _, k := range []string{"a/1", "a/2", "b/1", "b/2", "b/3", "c/1", "c/2", "d/1"} {
		pk, rk, _ := strings.Cut(k, "/")
		addEntity(t, c, map[string]any{"PartitionKey": pk, "RowKey": rk, "V": k})
	}
	v := token(table, "raud")
	v.StartPartitionKey, v.StartRowKey, v.EndPartitionKey, v.EndRowKey = "b", "2", "c", "1"
	sas := srv.tableSASClient(t, table, v)

	t.Run("QueriesSeeOnlyTheRange", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			filter string
			want   string
		}{
			{"All", "", "b/2,b/3,c/1"},
			{"PartitionB", "PartitionKey eq 'b'", "b/2,b/3"},
			{"OutsidePartition", "PartitionKey eq 'a'", ""},
			{"ByValue", "V ge 'b/3'", "b/3,c/1"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var opts *aztables.ListEntitiesOptions
				if tc.filter != "" {
					opts = &aztables.ListEntitiesOptions{Filter: &tc.filter}
				}
				got, _ := listAll(t, sas, opts)
				if keys := strings.Join(keysOf(t, got), ","); keys != tc.want {
					t.Errorf("got %q, want %q", keys, tc.want)
				}
			})
		}
	})

	t.Run("PointOperations", func(t *testing.T) {
		for _, k := range []string{"b/2", "b/3", "c/1"} {
			pk, rk, _ := strings.Cut(k, "/")
			if _, err := sas.GetEntity(ctxFor(t), pk, rk, nil); err != nil {
				t.Errorf("read %s inside the range: %v", k, err)
			}
		}
		before := snapshot(t, c)
		for _, k := range []string{"a/2", "b/1", "c/2", "d/1"} {
			pk, rk, _ := strings.Cut(k, "/")
			t.Run("Outside"+strings.ReplaceAll(k, "/", ""), func(t *testing.T) {
				_, err := sas.GetEntity(ctxFor(t), pk, rk, nil)
				wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
				_, err = sas.UpdateEntity(ctxFor(t), mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "V": "changed"}),
					&aztables.UpdateEntityOptions{IfMatch: to.Ptr(azcore.ETagAny), UpdateMode: aztables.UpdateModeReplace})
				wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
				_, err = sas.UpsertEntity(ctxFor(t), mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "V": "changed"}), nil)
				wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
				_, err = sas.DeleteEntity(ctxFor(t), pk, rk, nil)
				wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
			})
		}
		// Inserts just outside either end: (b,1x) sorts before (b,2) and
		// (c,10) after (c,1).
		for _, k := range []string{"b/1x", "c/10", "a/9", "e/0"} {
			pk, rk, _ := strings.Cut(k, "/")
			_, err := sas.AddEntity(ctxFor(t), mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk}), nil)
			wantError(t, err, http.StatusForbidden, "AuthorizationFailure")
		}
		unchanged(t, c, before)

		// Writes inside the range work: (b,25) lies between (b,2) and (c,1).
		if _, err := sas.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"b","RowKey":"25"}`), nil); err != nil {
			t.Errorf("insert b/25 inside the range: %v", err)
		}
		if _, err := sas.DeleteEntity(ctxFor(t), "b", "25", nil); err != nil {
			t.Errorf("delete b/25 inside the range: %v", err)
		}
	})

	t.Run("Batches", func(t *testing.T) {
		upsert := func(pk, rk string) aztables.TransactionAction {
			return aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace,
				Entity: mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "V": "batched"})}
		}
		before := snapshot(t, c)
		for _, tc := range []struct {
			name    string
			actions []aztables.TransactionAction
			bad     int
		}{
			{"LastBelowStart", []aztables.TransactionAction{upsert("b", "2"), upsert("b", "3"), upsert("b", "1")}, 2},
			{"FirstBelowStart", []aztables.TransactionAction{upsert("b", "1"), upsert("b", "2")}, 0},
			{"SecondAboveEnd", []aztables.TransactionAction{upsert("c", "1"), upsert("c", "2")}, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := sas.SubmitTransaction(ctxFor(t), tc.actions, nil)
				wantTransactionFailure(t, err, tc.bad, http.StatusForbidden, "AuthorizationFailure")
				unchanged(t, c, before)
			})
		}
		if _, err := sas.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{upsert("b", "2"), upsert("b", "3"), upsert("b", "4")}, nil); err != nil {
			t.Fatalf("batch inside the range: %v", err)
		}
		for _, rk := range []string{"2", "3", "4"} {
			if e, _ := getEDM(t, c, "b", rk); e.Properties["V"] != "batched" {
				t.Errorf("b/%s after the batch: %v", rk, e.Properties)
			}
		}
	})
}
