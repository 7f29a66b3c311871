package protocoltest

import (
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

//go:embed testdata/formats/*.json
var formatFixtures embed.FS

// formatEntity is the entity every format fixture shows: one property of
// each Edm type, and an integral Double (E).
const formatEntity = `{"PartitionKey":"p","RowKey":"r1","S":"str","I":42,` +
	`"L@odata.type":"Edm.Int64","L":"9007199254740993","D":1.5,"E@odata.type":"Edm.Double","E":2.0,"B":true,` +
	`"T@odata.type":"Edm.DateTime","T":"2024-01-02T03:04:05.1234567Z",` +
	`"G@odata.type":"Edm.Guid","G":"0f8fad5b-d9cb-469f-a165-70867728950e",` +
	`"X@odata.type":"Edm.Binary","X":"AQID"}`

// Accept values for the three JSON metadata levels.
const (
	acceptNone    = "application/json;odata=nometadata"
	acceptMinimal = "application/json;odata=minimalmetadata"
	acceptFull    = "application/json;odata=fullmetadata"
)

// suiteFormats asserts the exact JSON of each metadata level, the Prefer
// header, and the headers and error body every response carries
// ("Payload format for Table service operations", "Common REST API
// headers", "Status and error codes").
func suiteFormats(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	base := srv.AccountURL("devstoreaccount1")

	table := TableName(t, "formats")
	resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/Tables", Body: mustJSON(t, map[string]string{"TableName": table})})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("create table: %d %s", resp.StatusCode, truncate(resp.Body))
	}
	// Insert with fullmetadata and return-content: 201 with the entity.
	resp = srv.Do(t, Request{Method: http.MethodPost, Path: "/" + table, Body: []byte(formatEntity),
		Header: http.Header{"Accept": {acceptFull}, "Prefer": {"return-content"}}})
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("insert: %d %s", resp.StatusCode, truncate(resp.Body))
	}
	etag := resp.Header.Get("ETag")
	// Writes after the fixtures were read go to a scratch table, so the
	// fixture table keeps exactly one entity.
	newTable(t, sc, "scratch")
	scratch := TableName(t, "scratch")
	vars := map[string]string{"{{BASE}}": base, "{{TABLE}}": table, "{{ETAG}}": etag, "{{TS}}": timestampOfETag(t, etag)}

	t.Run("InsertReturnContent", func(t *testing.T) {
		commonHeaders(t, resp)
		wantFixture(t, resp.Body, "entity_fullmetadata.json", vars)
		if got := resp.Header.Get("Preference-Applied"); got != "return-content" {
			t.Errorf("Preference-Applied %q, want return-content", got)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, acceptFull) {
			t.Errorf("Content-Type %q, want %s...", ct, acceptFull)
		}
		if loc, want := resp.Header.Get("Location"), base+"/"+table+"(PartitionKey='p',RowKey='r1')"; loc != want {
			t.Errorf("Location %q, want %q", loc, want)
		}
	})

	for _, level := range []struct{ name, accept, fixture string }{
		{"nometadata", acceptNone, "nometadata"},
		{"minimalmetadata", acceptMinimal, "minimalmetadata"},
		{"fullmetadata", acceptFull, "fullmetadata"},
		{"PlainJSONIsMinimal", "application/json", "minimalmetadata"},
	} {
		t.Run("Entity/"+level.name, func(t *testing.T) {
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "r1"), Header: http.Header{"Accept": {level.accept}}})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET: %d %s", resp.StatusCode, truncate(resp.Body))
			}
			commonHeaders(t, resp)
			if resp.Header.Get("ETag") != etag {
				t.Errorf("ETag %q, want %q", resp.Header.Get("ETag"), etag)
			}
			wantFixture(t, resp.Body, "entity_"+level.fixture+".json", vars)
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json;odata="+level.fixture) {
				t.Errorf("Content-Type %q, want application/json;odata=%s...", ct, level.fixture)
			}
		})
		t.Run("List/"+level.name, func(t *testing.T) {
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", Header: http.Header{"Accept": {level.accept}}})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET: %d %s", resp.StatusCode, truncate(resp.Body))
			}
			commonHeaders(t, resp)
			wantFixture(t, resp.Body, "list_"+level.fixture+".json", vars)
		})
		t.Run("CreateTable/"+level.name, func(t *testing.T) {
			name := TableName(t, "")
			resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/Tables", Body: mustJSON(t, map[string]string{"TableName": name}),
				Header: http.Header{"Accept": {level.accept}}})
			if resp.StatusCode != http.StatusCreated {
				t.Fatalf("POST /Tables: %d %s", resp.StatusCode, truncate(resp.Body))
			}
			wantFixture(t, resp.Body, "table_"+level.fixture+".json", map[string]string{"{{BASE}}": base, "{{TABLE}}": name})
		})
	}

	t.Run("FormatOverridesAccept", func(t *testing.T) {
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "r1"),
			RawQuery: url.Values{"$format": {acceptFull}}.Encode(), Header: http.Header{"Accept": {acceptNone}}})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		wantFixture(t, resp.Body, "entity_fullmetadata.json", vars)
		resp = srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()",
			RawQuery: url.Values{"$format": {acceptNone}}.Encode(), Header: http.Header{"Accept": {acceptFull}}})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		wantFixture(t, resp.Body, "list_nometadata.json", vars)
	})

	t.Run("PreferReturnNoContent", func(t *testing.T) {
		resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/" + scratch,
			Body: []byte(`{"PartitionKey":"p","RowKey":"nocontent","V":1}`), Header: http.Header{"Prefer": {"return-no-content"}}})
		if resp.StatusCode != http.StatusNoContent || len(resp.Body) != 0 {
			t.Fatalf("insert: %d %q, want 204 and no body", resp.StatusCode, truncate(resp.Body))
		}
		commonHeaders(t, resp)
		if got := resp.Header.Get("Preference-Applied"); got != "return-no-content" {
			t.Errorf("Preference-Applied %q, want return-no-content", got)
		}
		if resp.Header.Get("ETag") == "" {
			t.Error("a 204 insert carries no ETag")
		}
		if _, err := sc.NewClient(scratch).GetEntity(ctxFor(t), "p", "nocontent", nil); err != nil {
			t.Errorf("the entity was not stored: %v", err)
		}
		name := TableName(t, "table")
		resp = srv.Do(t, Request{Method: http.MethodPost, Path: "/Tables", Body: mustJSON(t, map[string]string{"TableName": name}),
			Header: http.Header{"Prefer": {"return-no-content"}}})
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Preference-Applied") != "return-no-content" {
			t.Errorf("create table: %d, Preference-Applied %q; want 204 return-no-content", resp.StatusCode, resp.Header.Get("Preference-Applied"))
		}
	})

	t.Run("NoPreferReturnsContent", func(t *testing.T) {
		resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/" + scratch, Body: []byte(`{"PartitionKey":"p","RowKey":"default","V":1}`)})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("insert: %d, want 201", resp.StatusCode)
		}
		if body := decodeJSON(t, resp.Body); body["RowKey"] != "default" || body["odata.etag"] != resp.Header.Get("ETag") {
			t.Errorf("insert body %s", truncate(resp.Body))
		}
	})

	t.Run("UpdateReturns204WithETag", func(t *testing.T) {
		for _, method := range []string{http.MethodPut, http.MethodPatch} {
			resp := srv.Do(t, Request{Method: method, Path: entityPath(scratch, "p", "upd"), Body: []byte(`{"V":1}`)})
			if resp.StatusCode != http.StatusNoContent || resp.Header.Get("ETag") == "" || len(resp.Body) != 0 {
				t.Errorf("%s: %d, ETag %q, body %q; want 204 with an ETag and no body", method, resp.StatusCode, resp.Header.Get("ETag"), resp.Body)
			}
			commonHeaders(t, resp)
		}
		resp := srv.Do(t, Request{Method: http.MethodDelete, Path: entityPath(scratch, "p", "upd"), Header: http.Header{"If-Match": {"*"}}})
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("DELETE: %d, want 204", resp.StatusCode)
		}
		commonHeaders(t, resp)
	})

	t.Run("ErrorBody", func(t *testing.T) {
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "absent")})
		wantRawError(t, resp, http.StatusNotFound, "ResourceNotFound")
		commonHeaders(t, resp)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("error Content-Type %q, want application/json", ct)
		}
		var body struct {
			Err struct {
				Message struct{ Lang, Value string } `json:"message"`
			} `json:"odata.error"`
		}
		if err := json.Unmarshal(resp.Body, &body); err != nil {
			t.Fatal(err)
		}
		wantFixture(t, resp.Body, "error.json", map[string]string{"{{MESSAGE}}": body.Err.Message.Value})
		// "<message>\nRequestId:<x-ms-request-id>\nTime:<ISO 8601, 7 digits>"
		lines := strings.Split(body.Err.Message.Value, "\n")
		if len(lines) < 3 || lines[0] == "" ||
			lines[len(lines)-2] != "RequestId:"+resp.Header.Get("x-ms-request-id") ||
			!strings.HasPrefix(lines[len(lines)-1], "Time:") || len(lines[len(lines)-1]) != len("Time:2024-01-01T00:00:00.0000000Z") {
			t.Errorf("error message %q: want text, RequestId:<x-ms-request-id> and Time:<7-digit UTC time>", body.Err.Message.Value)
		}
	})

	t.Run("ErrorsOfEveryKindCarryCommonHeaders", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			req  Request
			code string
		}{
			{"Unsigned", Request{Method: http.MethodGet, Path: "/Tables", Signing: Unsigned}, ""},
			{"TableNotFound", Request{Method: http.MethodGet, Path: "/" + TableName(t, "absent") + "()"}, "TableNotFound"},
			{"Conflict", Request{Method: http.MethodPost, Path: "/Tables", Body: mustJSON(t, map[string]string{"TableName": table})}, "TableAlreadyExists"},
			{"BadFilter", Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: url.Values{"$filter": {"V eq"}}.Encode()}, "InvalidInput"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp := srv.Do(t, tc.req)
				if resp.StatusCode < 400 {
					t.Fatalf("got %d, want an error", resp.StatusCode)
				}
				commonHeaders(t, resp)
				code := resp.Header.Get("x-ms-error-code")
				if code == "" || (tc.code != "" && code != tc.code) {
					t.Errorf("x-ms-error-code %q, want %q", code, tc.code)
				}
			})
		}
	})

	t.Run("VersionAndRequestID", func(t *testing.T) {
		seen := map[string]bool{}
		for range 5 {
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables"})
			id := resp.Header.Get("x-ms-request-id")
			if seen[id] {
				t.Errorf("x-ms-request-id %q repeated", id)
			}
			seen[id] = true
			if v := resp.Header.Get("x-ms-version"); v != DefaultVersion {
				t.Errorf("x-ms-version %q, want the request's %s", v, DefaultVersion)
			}
		}
	})
}

// timestampOfETag inverts etagOf.
func timestampOfETag(t testing.TB, etag string) string {
	t.Helper()
	s, ok := strings.CutPrefix(etag, `W/"datetime'`)
	if !ok {
		t.Fatalf("ETag %q is not W/\"datetime'...'\"", etag)
	}
	s, ok = strings.CutSuffix(s, `'"`)
	if !ok {
		t.Fatalf("ETag %q is not W/\"datetime'...'\"", etag)
	}
	return strings.ReplaceAll(s, "%3A", ":")
}

// wantFixture compares a JSON body with a fixture after filling its
// {{PLACEHOLDERS}}. Objects compare as sets of members (Azure does not
// promise an order); numbers compare by value and by form, so an integral
// Double written as "2" where the fixture has "2.0" fails.
func wantFixture(t testing.TB, body []byte, fixture string, vars map[string]string) {
	t.Helper()
	raw, err := formatFixtures.ReadFile("testdata/formats/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	want := fill(decodeAny(t, raw), vars)
	got := decodeAny(t, body)
	if diffs := jsonDiff("", got, want); len(diffs) > 0 {
		t.Errorf("body differs from %s:\n  %s\nbody: %s", fixture, strings.Join(diffs, "\n  "), truncate(body))
	}
}

func decodeAny(t testing.TB, b []byte) any {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", truncate(b), err)
	}
	return v
}

func fill(v any, vars map[string]string) any {
	switch x := v.(type) {
	case string:
		for k, val := range vars {
			x = strings.ReplaceAll(x, k, val)
		}
		return x
	case map[string]any:
		for k, e := range x {
			x[k] = fill(e, vars)
		}
	case []any:
		for i, e := range x {
			x[i] = fill(e, vars)
		}
	}
	return v
}

// jsonDiff lists the differences between two decoded JSON values.
func jsonDiff(path string, got, want any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: got %v, want an object", path, got)}
		}
		var out []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				out = append(out, fmt.Sprintf("%s.%s: missing, want %v", path, k, wv))
				continue
			}
			out = append(out, jsonDiff(path+"."+k, gv, wv)...)
		}
		for k, gv := range g {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s.%s: unexpected member %v", path, k, gv))
			}
		}
		return out
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: got %v, want %d elements", path, got, len(w))}
		}
		var out []string
		for i := range w {
			out = append(out, jsonDiff(fmt.Sprintf("%s[%d]", path, i), g[i], w[i])...)
		}
		return out
	case json.Number:
		g, ok := got.(json.Number)
		if !ok {
			return []string{fmt.Sprintf("%s: got %#v, want the number %s", path, got, w)}
		}
		gf, err1 := strconv.ParseFloat(g.String(), 64)
		wf, err2 := strconv.ParseFloat(w.String(), 64)
		if err1 != nil || err2 != nil || gf != wf || isIntegerLiteral(g.String()) != isIntegerLiteral(w.String()) {
			return []string{fmt.Sprintf("%s: got %s, want %s", path, g, w)}
		}
		return nil
	}
	if !reflect.DeepEqual(got, want) {
		return []string{fmt.Sprintf("%s: got %#v, want %#v", path, got, want)}
	}
	return nil
}

func isIntegerLiteral(s string) bool { return !strings.ContainsAny(s, ".eE") }
