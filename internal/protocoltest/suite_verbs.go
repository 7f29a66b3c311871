package protocoltest

import (
	"net/http"
	"testing"
)

// suiteVerbs covers how a merge can be spelled ("Merge Entity": PATCH from
// modern SDKs, MERGE from legacy ones, and POST with X-HTTP-Method: MERGE
// through proxies that only pass standard verbs) and the X-HTTP-Method
// errors.
func suiteVerbs(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	c := newTable(t, sc, "verbs")
	table := TableName(t, "verbs")

	mergeSpellings := []struct {
		name    string
		method  string
		header  http.Header
		signing Signing
	}{
		{"PATCH", http.MethodPatch, nil, SharedKeyLite},
		{"MERGE", "MERGE", nil, SharedKeyLite},
		{"TunnelledMERGE", http.MethodPost, http.Header{"X-HTTP-Method": {"MERGE"}}, SharedKeyLite},
		// Shared Key signs the verb on the wire: POST, not MERGE.
		{"TunnelledMERGESharedKey", http.MethodPost, http.Header{"X-HTTP-Method": {"MERGE"}}, SharedKey},
		{"MERGESharedKey", "MERGE", nil, SharedKey},
	}
	for _, tc := range mergeSpellings {
		t.Run(tc.name, func(t *testing.T) {
			rk := tc.name
			add := addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": rk, "Keep": "k", "Change": "old"})

			h := http.Header{"If-Match": {string(add.ETag)}}
			for k, v := range tc.header {
				h[k] = v
			}
			resp := srv.Do(t, Request{Method: tc.method, Path: entityPath(table, "p", rk), Body: []byte(`{"Change":"new","Added":1}`), Header: h, Signing: tc.signing})
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("merge: %d %s, want 204", resp.StatusCode, truncate(resp.Body))
			}
			got, etag := getEDM(t, c, "p", rk)
			if !equalProps(got.Properties, map[string]any{"Keep": "k", "Change": "new", "Added": int32(1)}) {
				t.Errorf("after merge: %v, want Keep=k Change=new Added=1", got.Properties)
			}
			if string(etag) != resp.Header.Get("ETag") {
				t.Errorf("stored ETag %q, merge returned %q", etag, resp.Header.Get("ETag"))
			}

			// The same spelling is an Insert Or Merge without If-Match.
			h.Del("If-Match")
			resp = srv.Do(t, Request{Method: tc.method, Path: entityPath(table, "p", rk+"New"), Body: []byte(`{"V":1}`), Header: h, Signing: tc.signing})
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("insert or merge: %d %s, want 204", resp.StatusCode, truncate(resp.Body))
			}
			if got, _ := getEDM(t, c, "p", rk+"New"); !equalProps(got.Properties, map[string]any{"V": int32(1)}) {
				t.Errorf("after insert or merge: %v", got.Properties)
			}

			// And with a stale ETag it changes nothing.
			h.Set("If-Match", string(add.ETag))
			before := snapshot(t, c)
			resp = srv.Do(t, Request{Method: tc.method, Path: entityPath(table, "p", rk), Body: []byte(`{"Change":"stale"}`), Header: h, Signing: tc.signing})
			wantRawError(t, resp, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied")
			unchanged(t, c, before)
		})
	}

	t.Run("TunnelledDelete", func(t *testing.T) {
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"tunnelDelete"}`)
		resp := srv.Do(t, Request{Method: http.MethodPost, Path: entityPath(table, "p", "tunnelDelete"),
			Header: http.Header{"X-HTTP-Method": {"DELETE"}, "If-Match": {"*"}}})
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("POST X-HTTP-Method: DELETE: %d %s, want 204", resp.StatusCode, truncate(resp.Body))
		}
		_, err := c.GetEntity(ctxFor(t), "p", "tunnelDelete", nil)
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	})

	t.Run("PutWithoutIfMatchIsInsertOrReplace", func(t *testing.T) {
		path := entityPath(table, "p", "upsertReplace")
		for i, body := range []string{`{"A":1,"B":2}`, `{"A":3}`} {
			resp := srv.Do(t, Request{Method: http.MethodPut, Path: path, Body: []byte(body)})
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("PUT %d: %d %s", i, resp.StatusCode, truncate(resp.Body))
			}
		}
		if got, _ := getEDM(t, c, "p", "upsertReplace"); !equalProps(got.Properties, map[string]any{"A": int32(3)}) {
			t.Errorf("after two PUTs: %v, want only A=3", got.Properties)
		}
	})

	t.Run("XMethodErrors", func(t *testing.T) {
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"xmethod","V":1}`)
		before := snapshot(t, c)
		for _, tc := range []struct {
			name   string
			method string
			xm     string
			code   string
		}{
			{"OnGET", http.MethodGet, "MERGE", "XMethodNotUsingPost"},
			{"OnPUT", http.MethodPut, "MERGE", "XMethodNotUsingPost"},
			{"OnPATCH", http.MethodPatch, "DELETE", "XMethodNotUsingPost"},
			{"OnDELETE", http.MethodDelete, "MERGE", "XMethodNotUsingPost"},
			{"BogusValue", http.MethodPost, "BOGUS", "XMethodIncorrectValue"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var body []byte
				if tc.method != http.MethodGet && tc.method != http.MethodDelete {
					body = []byte(`{"V":2}`)
				}
				resp := srv.Do(t, Request{Method: tc.method, Path: entityPath(table, "p", "xmethod"), Body: body,
					Header: http.Header{"X-HTTP-Method": {tc.xm}, "If-Match": {"*"}}})
				wantRawError(t, resp, http.StatusBadRequest, tc.code)
			})
		}
		unchanged(t, c, before)
	})
}
