package protocoltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// suiteEntities covers the single-entity operations: Insert, Get, Update,
// Merge, the two upserts and Delete, with their If-Match rules ("Update
// Entity", "Merge Entity", "Delete Entity").
func suiteEntities(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	ctx := ctxFor

	t.Run("AddReturnsTheEntity", func(t *testing.T) {
		c := newTable(t, sc, "")
		resp := addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","Name":"n","Age":7}`)
		if resp.ETag == "" {
			t.Error("AddEntity returned no ETag")
		}
		var e aztables.EDMEntity
		if err := json.Unmarshal(resp.Value, &e); err != nil {
			t.Fatal(err)
		}
		if e.PartitionKey != "p" || e.RowKey != "r" || e.Properties["Name"] != "n" || e.Properties["Age"] != int32(7) {
			t.Errorf("AddEntity returned %+v", e)
		}
		if e.ETag != string(resp.ETag) {
			t.Errorf("odata.etag %q differs from the ETag header %q", e.ETag, resp.ETag)
		}
	})

	t.Run("AddDuplicateIsEntityAlreadyExists", func(t *testing.T) {
		c := newTable(t, sc, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","V":"first"}`)
		before := snapshot(t, c)
		_, err := c.AddEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","V":"second"}`), nil)
		wantError(t, err, http.StatusConflict, "EntityAlreadyExists")
		unchanged(t, c, before)
	})

	t.Run("AddToMissingTableIsTableNotFound", func(t *testing.T) {
		c := sc.NewClient(TableName(t, "missing"))
		_, err := c.AddEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
		wantError(t, err, http.StatusNotFound, "TableNotFound")
		_, err = c.GetEntity(ctx(t), "p", "r", nil)
		wantError(t, err, http.StatusNotFound, "TableNotFound")
		_, err = c.NewListEntitiesPager(nil).NextPage(ctx(t))
		wantError(t, err, http.StatusNotFound, "TableNotFound")
	})

	t.Run("GetMissingIsResourceNotFound", func(t *testing.T) {
		c := newTable(t, sc, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r"}`)
		_, err := c.GetEntity(ctx(t), "p", "other", nil)
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
		_, err = c.GetEntity(ctx(t), "P", "r", nil) // keys are case-sensitive
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	})

	t.Run("GetReturnsTypedProperties", func(t *testing.T) {
		c := newTable(t, sc, "")
		in := aztables.EDMEntity{
			Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"},
			Properties: map[string]any{
				"Str":  "hello",
				"I32":  int32(-42),
				"I64":  aztables.EDMInt64(1 << 40),
				"Dbl":  2.5,
				"Bool": true,
				"Guid": aztables.EDMGUID("c9da6455-213d-42c9-9a79-3e9149a57833"),
				"Bin":  aztables.EDMBinary([]byte{0, 1, 2, 0xff}),
			},
		}
		add := addEntity(t, c, mustJSON(t, in))
		got, etag := getEDM(t, c, "p", "r")
		if etag != add.ETag {
			t.Errorf("GetEntity ETag %q, AddEntity ETag %q", etag, add.ETag)
		}
		for name, want := range in.Properties {
			if !equalProp(got.Properties[name], want) {
				t.Errorf("%s: got %#v (%T), want %#v (%T)", name, got.Properties[name], got.Properties[name], want, want)
			}
		}
		if len(got.Properties) != len(in.Properties) {
			t.Errorf("got properties %v, want exactly %v", got.Properties, in.Properties)
		}
	})

	t.Run("GetWithSelect", func(t *testing.T) {
		// GetEntityOptions has no $select, so this is a raw request.
		c := newTable(t, sc, "")
		table := TableName(t, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","A":"a","B":2,"C":true}`)
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "r"), RawQuery: "$select=A,C"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("got %d %s", resp.StatusCode, truncate(resp.Body))
		}
		body := decodeJSON(t, resp.Body)
		delete(body, "odata.metadata")
		delete(body, "odata.etag")
		if len(body) != 2 || body["A"] != "a" || body["C"] != true {
			t.Errorf("$select=A,C returned %v, want only A and C", body)
		}
	})

	t.Run("UpdateReplaceWithETag", func(t *testing.T) {
		c := newTable(t, sc, "")
		add := addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","Keep":"k","Drop":"d"}`)
		upd, err := c.UpdateEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","Keep":"k2","New":1}`),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &add.ETag})
		if err != nil {
			t.Fatal(err)
		}
		if upd.ETag == "" || upd.ETag == add.ETag {
			t.Errorf("replace returned ETag %q; the insert's was %q", upd.ETag, add.ETag)
		}
		got, etag := getEDM(t, c, "p", "r")
		if etag != upd.ETag {
			t.Errorf("stored ETag %q, replace returned %q", etag, upd.ETag)
		}
		if len(got.Properties) != 2 || got.Properties["Keep"] != "k2" || got.Properties["New"] != int32(1) {
			t.Errorf("after replace: %v, want exactly Keep=k2 New=1", got.Properties)
		}

		// The insert's ETag is stale now.
		before := snapshot(t, c)
		_, err = c.UpdateEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","X":1}`),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &add.ETag})
		wantError(t, err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
		unchanged(t, c, before)
	})

	t.Run("UpdateMergeWithETag", func(t *testing.T) {
		c := newTable(t, sc, "")
		add := addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","Keep":"k","Change":"c"}`)
		upd, err := c.UpdateEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","Change":"c2","New":true}`),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &add.ETag})
		if err != nil {
			t.Fatal(err)
		}
		got, etag := getEDM(t, c, "p", "r")
		if etag != upd.ETag || etag == add.ETag {
			t.Errorf("ETags: insert %q, merge %q, stored %q", add.ETag, upd.ETag, etag)
		}
		want := map[string]any{"Keep": "k", "Change": "c2", "New": true}
		if !equalProps(got.Properties, want) {
			t.Errorf("after merge: %v, want %v", got.Properties, want)
		}

		before := snapshot(t, c)
		_, err = c.UpdateEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","X":1}`),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &add.ETag})
		wantError(t, err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
		unchanged(t, c, before)
	})

	t.Run("UpdateStarOnMissingIsResourceNotFound", func(t *testing.T) {
		c := newTable(t, sc, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r"}`)
		before := snapshot(t, c)
		star := azcore.ETagAny
		for _, mode := range []aztables.UpdateMode{aztables.UpdateModeReplace, aztables.UpdateModeMerge} {
			_, err := c.UpdateEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"absent","X":1}`),
				&aztables.UpdateEntityOptions{UpdateMode: mode, IfMatch: &star})
			wantError(t, err, http.StatusNotFound, "ResourceNotFound")
			// A well-formed ETag on a missing entity is a 404 too.
			etag := azcore.ETag(etagOf("2024-01-01T00:00:00.0000000Z"))
			_, err = c.UpdateEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"absent","X":1}`),
				&aztables.UpdateEntityOptions{UpdateMode: mode, IfMatch: &etag})
			wantError(t, err, http.StatusNotFound, "ResourceNotFound")
		}
		unchanged(t, c, before)
	})

	t.Run("UpdateStarOnExistingSucceeds", func(t *testing.T) {
		c := newTable(t, sc, "")
		add := addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","A":1}`)
		star := azcore.ETagAny
		upd, err := c.UpdateEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","B":2}`),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &star})
		if err != nil {
			t.Fatal(err)
		}
		if upd.ETag == add.ETag {
			t.Error("ETag did not change")
		}
		got, _ := getEDM(t, c, "p", "r")
		if !equalProps(got.Properties, map[string]any{"B": int32(2)}) {
			t.Errorf("after replace with *: %v", got.Properties)
		}
	})

	t.Run("UpsertReplace", func(t *testing.T) {
		c := newTable(t, sc, "")
		replace := &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}
		if _, err := c.UpsertEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","A":"a","B":"b"}`), replace); err != nil {
			t.Fatalf("upsert (insert): %v", err)
		}
		got, first := getEDM(t, c, "p", "r")
		if !equalProps(got.Properties, map[string]any{"A": "a", "B": "b"}) {
			t.Errorf("after insert: %v", got.Properties)
		}
		up, err := c.UpsertEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","A":"a2"}`), replace)
		if err != nil {
			t.Fatalf("upsert (replace): %v", err)
		}
		got, etag := getEDM(t, c, "p", "r")
		if !equalProps(got.Properties, map[string]any{"A": "a2"}) {
			t.Errorf("after replace: %v, want only A=a2 (replace drops B)", got.Properties)
		}
		if etag != up.ETag || etag == first {
			t.Errorf("ETags: first %q, upsert %q, stored %q", first, up.ETag, etag)
		}
	})

	t.Run("UpsertMerge", func(t *testing.T) {
		c := newTable(t, sc, "")
		merge := &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}
		if _, err := c.UpsertEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","A":"a","B":"b"}`), merge); err != nil {
			t.Fatalf("upsert (insert): %v", err)
		}
		got, first := getEDM(t, c, "p", "r")
		if !equalProps(got.Properties, map[string]any{"A": "a", "B": "b"}) {
			t.Errorf("after insert: %v", got.Properties)
		}
		up, err := c.UpsertEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","A":"a2","C":3}`), merge)
		if err != nil {
			t.Fatalf("upsert (merge): %v", err)
		}
		got, etag := getEDM(t, c, "p", "r")
		if !equalProps(got.Properties, map[string]any{"A": "a2", "B": "b", "C": int32(3)}) {
			t.Errorf("after merge: %v, want A=a2 B=b C=3 (merge keeps B)", got.Properties)
		}
		if etag != up.ETag || etag == first {
			t.Errorf("ETags: first %q, upsert %q, stored %q", first, up.ETag, etag)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		c := newTable(t, sc, "")
		add := addEntity(t, c, `{"PartitionKey":"p","RowKey":"byETag"}`)
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"byStar"}`)
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"default"}`)
		stale := addEntity(t, c, `{"PartitionKey":"p","RowKey":"stale"}`)
		if _, err := c.UpsertEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"stale","V":2}`), nil); err != nil {
			t.Fatal(err)
		}

		if _, err := c.DeleteEntity(ctx(t), "p", "byETag", &aztables.DeleteEntityOptions{IfMatch: &add.ETag}); err != nil {
			t.Errorf("delete with its ETag: %v", err)
		}
		star := azcore.ETagAny
		if _, err := c.DeleteEntity(ctx(t), "p", "byStar", &aztables.DeleteEntityOptions{IfMatch: &star}); err != nil {
			t.Errorf("delete with *: %v", err)
		}
		if _, err := c.DeleteEntity(ctx(t), "p", "default", nil); err != nil { // the SDK sends *
			t.Errorf("delete with the SDK's default: %v", err)
		}
		for _, rk := range []string{"byETag", "byStar", "default"} {
			_, err := c.GetEntity(ctx(t), "p", rk, nil)
			wantError(t, err, http.StatusNotFound, "ResourceNotFound")
		}

		before := snapshot(t, c)
		_, err := c.DeleteEntity(ctx(t), "p", "stale", &aztables.DeleteEntityOptions{IfMatch: &stale.ETag})
		wantError(t, err, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
		_, err = c.DeleteEntity(ctx(t), "p", "absent", nil)
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
		_, err = c.DeleteEntity(ctx(t), "p", "byETag", nil) // deleted already
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
		unchanged(t, c, before)

		// Without If-Match Delete Entity is refused: the header is required.
		resp := srv.Do(t, Request{Method: http.MethodDelete, Path: entityPath(TableName(t, ""), "p", "stale")})
		wantRawError(t, resp, http.StatusBadRequest, "MissingRequiredHeader")
		unchanged(t, c, before)
	})

	t.Run("ConditionHeaderErrors", func(t *testing.T) {
		// "Table service error codes", InvalidInput (400): "The etag value
		// '{0}' specified in one of the request headers is not valid",
		// "If-None-Match HTTP header cannot be specified for PUT
		// operations" and "... for DELETE operations".
		c := newTable(t, sc, "")
		table := TableName(t, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","V":1}`)
		before := snapshot(t, c)
		for _, tc := range []struct {
			name   string
			method string
			header http.Header
		}{
			{"MalformedETagOnPUT", http.MethodPut, http.Header{"If-Match": {"not-an-etag"}}},
			// A weak ETag that matches nothing is a failed condition (412,
			// suiteClientCompat); a strong one is malformed.
			{"StrongETagOnPATCH", http.MethodPatch, http.Header{"If-Match": {`"nonsense"`}}},
			{"IfNoneMatchOnPATCH", http.MethodPatch, http.Header{"If-None-Match": {"*"}}},
			{"MalformedETagOnDELETE", http.MethodDelete, http.Header{"If-Match": {"garbage"}}},
			{"IfNoneMatchOnPUT", http.MethodPut, http.Header{"If-None-Match": {"*"}}},
			{"IfNoneMatchOnDELETE", http.MethodDelete, http.Header{"If-None-Match": {"*"}, "If-Match": {"*"}}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var body []byte
				if tc.method != http.MethodDelete {
					body = []byte(`{"V":2}`)
				}
				resp := srv.Do(t, Request{Method: tc.method, Path: entityPath(table, "p", "r"), Body: body, Header: tc.header})
				wantRawError(t, resp, http.StatusBadRequest, "InvalidInput")
			})
		}
		unchanged(t, c, before)
	})

	t.Run("ETagChangesOnEveryWriteAndMatchesTimestamp", func(t *testing.T) {
		c := newTable(t, sc, "")
		seen := map[azcore.ETag]string{}
		note := func(op string, etag azcore.ETag) {
			t.Helper()
			if prev, dup := seen[etag]; dup {
				t.Errorf("%s returned ETag %q, already returned by %s", op, etag, prev)
			}
			seen[etag] = op
			got, stored := getEDM(t, c, "p", "r")
			if stored != etag {
				t.Errorf("after %s: stored ETag %q, response ETag %q", op, stored, etag)
			}
			ts, err := time.Time(got.Timestamp).MarshalText()
			if err != nil {
				t.Fatal(err)
			}
			raw := rawTimestamp(t, srv, TableName(t, ""), "p", "r")
			if want := etagOf(raw); string(etag) != want {
				t.Errorf("after %s: ETag %q is not derived from Timestamp %s (%s): want %q", op, etag, raw, ts, want)
			}
		}
		add := addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","N":0}`)
		note("insert", add.ETag)
		for i := range 3 {
			up, err := c.UpsertEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","N":1}`), nil)
			if err != nil {
				t.Fatal(err)
			}
			note(fmt.Sprintf("merge %d (same body)", i), up.ETag)
		}
		up, err := c.UpsertEntity(ctx(t), []byte(`{"PartitionKey":"p","RowKey":"r","N":2}`), &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
		if err != nil {
			t.Fatal(err)
		}
		note("replace", up.ETag)
	})
}

// rawTimestamp reads the Timestamp of an entity as the wire writes it.
func rawTimestamp(t testing.TB, srv *Server, table, pk, rk string) string {
	t.Helper()
	resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, pk, rk)})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", entityPath(table, pk, rk), resp.StatusCode, truncate(resp.Body))
	}
	body := decodeJSON(t, resp.Body)
	ts, _ := body["Timestamp"].(string)
	if ts == "" {
		t.Fatalf("entity %s has no Timestamp", truncate(resp.Body))
	}
	if etag := resp.Header.Get("ETag"); etag != body["odata.etag"] {
		t.Errorf("ETag header %q differs from odata.etag %v", etag, body["odata.etag"])
	}
	return ts
}
