package protocoltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// suiteClientCompat covers requests real clients send where tablebridge was
// seen to answer differently from Azure: the .NET LINQ provider's Boolean
// literals, Azure Storage Explorer's typed values written as strings and
// its first page ($select= and $top=0), every form of If-Match,
// x-ms-version validation, and the Vary header of CORS. The secondary
// location has its own group (suiteSecondary).
func suiteClientCompat(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()

	// "Querying tables and entities" follows OData v3, where a Boolean
	// literal is a Boolean expression: $filter=true matches everything and
	// false nothing. The .NET LINQ provider writes "(true and ...)".
	t.Run("BooleanLiteralFilters", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		addEntities(t, c, []map[string]any{
			{"PartitionKey": "p", "RowKey": "1"}, {"PartitionKey": "p", "RowKey": "2"}, {"PartitionKey": "q", "RowKey": "1"},
		})
		for _, tc := range []struct{ filter, want string }{
			{"true", "p/1 p/2 q/1"},
			{"false", ""},
			{"not true", ""},
			{"not false", "p/1 p/2 q/1"},
			{"(true and RowKey eq '1') and ((false or PartitionKey eq 'p'))", "p/1"},
			{"true or PartitionKey eq 'nothing'", "p/1 p/2 q/1"},
			{"false and PartitionKey eq 'p'", ""},
			{"1 eq 1 and PartitionKey eq 'q'", "q/1"},
			{"'a' gt 'b' or RowKey eq '2'", "p/2"},
			{"true eq false", ""},
		} {
			entities, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr(tc.filter)})
			keys := keysOf(t, entities)
			if got := strings.Join(keys, " "); got != tc.want {
				t.Errorf("$filter=%s: %q, want %q", tc.filter, got, tc.want)
			}
		}
		// On Query Tables as well.
		for _, tc := range []struct {
			filter string
			want   bool
		}{
			{"true", true}, {"false", false}, {"(true and TableName eq '" + table + "')", true}, {"not (true)", false},
		} {
			found := false
			p := sc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr(tc.filter)})
			for p.More() {
				page, err := p.NextPage(ctxFor(t))
				if err != nil {
					t.Fatalf("Query Tables $filter=%s: %v", tc.filter, err)
				}
				for _, tb := range page.Tables {
					found = found || *tb.Name == table
				}
			}
			if found != tc.want {
				t.Errorf("Query Tables $filter=%s: table listed %v, want %v", tc.filter, found, tc.want)
			}
		}
		// A literal that is not Boolean is no condition, and literals of
		// different types do not compare.
		for _, bad := range []string{"'a'", "1", "1 eq 'a'", "true eq 1"} {
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: "$filter=" + url.QueryEscape(bad)})
			wantRawError(t, resp, http.StatusBadRequest, "InvalidInput")
		}
	})

	// Azure Storage Explorer sends typed values as JSON strings next to
	// their annotation ("b":"false","b@odata.type":"Edm.Boolean"); Azure
	// stores them with the annotated type. A string that does not parse as
	// the type is still 400.
	t.Run("TypedValuesAsStrings", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		const typed = `"b":"false","b@odata.type":"Edm.Boolean","t":"True","t@odata.type":"Edm.Boolean",` +
			`"i":"32","i@odata.type":"Edm.Int32","d":"1.5","d@odata.type":"Edm.Double",` +
			`"l":"9007199254740993","l@odata.type":"Edm.Int64","g":"0b7a1d3c-5f4e-4a2b-9c8d-7e6f5a4b3c2d","g@odata.type":"Edm.Guid",` +
			`"dt":"2024-01-02T03:04:05.1234567Z","dt@odata.type":"Edm.DateTime","bin":"AQID","bin@odata.type":"Edm.Binary",` +
			`"s":"text","s@odata.type":"Edm.String"`
		check := func(t *testing.T, rk string) {
			t.Helper()
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", rk),
				Header: http.Header{"Accept": {"application/json;odata=fullmetadata"}}})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("get %s: %d %s", rk, resp.StatusCode, truncate(resp.Body))
			}
			m := decodeJSON(t, resp.Body)
			want := map[string]any{
				"b": false, "t": true, "i": 32, "d": 1.5,
				"l": "9007199254740993", "l@odata.type": "Edm.Int64", "g": "0b7a1d3c-5f4e-4a2b-9c8d-7e6f5a4b3c2d", "g@odata.type": "Edm.Guid",
				"dt": "2024-01-02T03:04:05.1234567Z", "dt@odata.type": "Edm.DateTime", "bin": "AQID", "bin@odata.type": "Edm.Binary", "s": "text",
			}
			for k, v := range want {
				if fmt.Sprint(m[k]) != fmt.Sprint(v) || (k == "i" || k == "d") != isNumber(m[k]) {
					t.Errorf("%s: %s = %#v, want %#v", rk, k, m[k], v)
				}
			}
			for _, k := range []string{"b@odata.type", "t@odata.type", "i@odata.type", "d@odata.type"} {
				if _, ok := m[k]; ok {
					t.Errorf("%s: %s present; Boolean, Int32 and a fractional Double carry no annotation", rk, k)
				}
			}
		}
		hdr := http.Header{"Prefer": {"return-no-content"}}
		if resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/" + table, Header: hdr,
			Body: []byte(`{"PartitionKey":"p","RowKey":"insert",` + typed + `}`)}); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("insert: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		check(t, "insert")
		for _, method := range []string{http.MethodPut, http.MethodPatch} {
			rk := strings.ToLower(method)
			if resp := srv.Do(t, Request{Method: method, Path: entityPath(table, "p", rk),
				Body: []byte(`{"PartitionKey":"p","RowKey":"` + rk + `",` + typed + `}`)}); resp.StatusCode != http.StatusNoContent {
				t.Fatalf("%s: %d %s", method, resp.StatusCode, truncate(resp.Body))
			}
			check(t, rk)
		}
		before := snapshot(t, c)
		for _, bad := range []string{
			`"b":"yes","b@odata.type":"Edm.Boolean"`, `"b":"","b@odata.type":"Edm.Boolean"`,
			`"i":"3.5","i@odata.type":"Edm.Int32"`, `"i":"2147483648","i@odata.type":"Edm.Int32"`,
			`"d":"1.5x","d@odata.type":"Edm.Double"`,
		} {
			resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"bad",` + bad + `}`)})
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("insert %s: %d %s, want 400", bad, resp.StatusCode, truncate(resp.Body))
			}
		}
		unchanged(t, c, before)
	})

	// "Specifying conditional headers for Table service operations": only
	// "*" and weak ETags (W/"...", the W in either case) are conditions. A
	// weak ETag that does not match fails with 412; a strong or malformed
	// one is 400.
	t.Run("IfMatchForms", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		resp := addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","v":1}`)
		etag := string(resp.ETag)
		path := entityPath(table, "p", "r")
		body := []byte(`{"PartitionKey":"p","RowKey":"r","v":2}`)
		before := snapshot(t, c)
		strong := strings.TrimPrefix(etag, "W/")
		for _, tc := range []struct {
			name, ifMatch string
			status        int
			code          string
		}{
			{"WeakWrong", `W/"wrong"`, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied"},
			{"LowerCaseWeakWrong", `w/"wrong"`, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied"},
			{"WeakStale", `W/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied"},
			{"Strong", strong, http.StatusBadRequest, "InvalidInput"},
			{"StrongDocumented", `"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, http.StatusBadRequest, "InvalidInput"},
			{"Unquoted", "wrong", http.StatusBadRequest, "InvalidInput"},
			{"List", etag + ", " + etag, http.StatusBadRequest, "InvalidInput"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				for _, method := range []string{http.MethodPut, http.MethodPatch, http.MethodDelete} {
					var b []byte
					if method != http.MethodDelete {
						b = body
					}
					resp := srv.Do(t, Request{Method: method, Path: path, Body: b, Header: http.Header{"If-Match": {tc.ifMatch}}})
					if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code {
						t.Errorf("%s with If-Match %s: %d %s, want %d %s", method, tc.ifMatch, resp.StatusCode,
							resp.Header.Get("x-ms-error-code"), tc.status, tc.code)
					}
				}
				unchanged(t, c, before)
			})
		}
		// A weak ETag on a missing entity is 404, as for any ETag.
		resp2 := srv.Do(t, Request{Method: http.MethodPut, Path: entityPath(table, "p", "missing"), Body: body,
			Header: http.Header{"If-Match": {`W/"wrong"`}}})
		wantRawError(t, resp2, http.StatusNotFound, "ResourceNotFound")
		// The right ETag with a lower-case w/ matches.
		lower := "w" + strings.TrimPrefix(etag, "W")
		if resp := srv.Do(t, Request{Method: http.MethodPut, Path: path, Body: body, Header: http.Header{"If-Match": {lower}}}); resp.StatusCode != http.StatusNoContent {
			t.Errorf("PUT with If-Match %s: %d %s", lower, resp.StatusCode, truncate(resp.Body))
		}
		// In a $batch too.
		batch := srv.doBatch(t, []batchOp{{Method: http.MethodDelete, Path: path, Header: http.Header{"If-Match": {`w/"wrong"`}}}})
		if parts := parseBatchResponse(t, batch.Header.Get("Content-Type"), batch.Body); len(parts) != 1 || parts[0].StatusCode != http.StatusPreconditionFailed {
			t.Errorf("$batch DELETE with a wrong weak ETag: %+v", parts)
		}
	})

	// "Versioning for Azure Storage": x-ms-version must name a service
	// version; anything else is 400 InvalidHeaderValue, on every operation,
	// and the value is not echoed back.
	t.Run("ServiceVersion", func(t *testing.T) {
		table := TableName(t, "")
		create := func(version string) *Response {
			return srv.Do(t, Request{Method: http.MethodPost, Path: "/Tables", Body: []byte(`{"TableName":"` + table + `"}`),
				Header: http.Header{"x-ms-version": {version}, "Prefer": {"return-no-content"}}})
		}
		for _, v := range []string{"invalid", "2019-02-03", "2019-13-02", "2019-2-2", "2019-02-02x", "1.0"} {
			resp := create(v)
			wantRawError(t, resp, http.StatusBadRequest, "InvalidHeaderValue")
			if got := resp.Header.Get("x-ms-version"); got == v {
				t.Errorf("x-ms-version %q echoed back", got)
			}
		}
		for _, tc := range []struct {
			name string
			r    Request
			xml  bool
		}{
			{"QueryTables", Request{Method: http.MethodGet, Path: "/Tables"}, false},
			{"QueryEntities", Request{Method: http.MethodGet, Path: "/" + table + "()"}, false},
			{"ServiceProperties", Request{Method: http.MethodGet, Path: "/", RawQuery: "restype=service&comp=properties"}, true},
			{"Batch", Request{Method: http.MethodPost, Path: "/$batch", Header: http.Header{"Content-Type": {"multipart/mixed; boundary=b"}}, Body: []byte("--b--\r\n")}, false},
		} {
			if tc.r.Header == nil {
				tc.r.Header = http.Header{}
			}
			tc.r.Header.Set("x-ms-version", "invalid")
			resp := srv.Do(t, tc.r)
			if tc.xml {
				wantXMLError(t, resp, http.StatusBadRequest, "InvalidHeaderValue")
			} else {
				wantRawError(t, resp, http.StatusBadRequest, "InvalidHeaderValue")
			}
		}
		if _, err := sc.NewClient(table).GetAccessPolicy(ctxFor(t), nil); err == nil {
			t.Fatal("a refused Create Table created the table")
		}
		// Every service version is served: the oldest, the SDKs', the newest
		// listed, and a later one (an SDK that adopted a version released
		// after this build); each is echoed back.
		for i, v := range []string{"2009-09-19", "2019-02-02", "2020-12-06", "2025-11-05", "2030-01-01"} {
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables", Header: http.Header{"x-ms-version": {v}}})
			if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-version") != v {
				t.Errorf("x-ms-version %s: %d, answered %q", v, resp.StatusCode, resp.Header.Get("x-ms-version"))
			}
			if i == 0 {
				if r := create(v); r.StatusCode != http.StatusNoContent {
					t.Errorf("create with %s: %d %s", v, r.StatusCode, truncate(r.Body))
				}
			}
		}
	})

	// Azure Storage Explorer's first page: "$select=" selects every
	// property and "$top=0" is accepted and answers no entities.
	t.Run("StorageExplorerFirstPage", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		addEntity(t, c, `{"PartitionKey":"0","RowKey":"r","Name":"x"}`)
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()",
			RawQuery: "$select=&$filter=" + url.QueryEscape("PartitionKey eq '0'") + "&$top=0"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("$top=0: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		if v, ok := decodeJSON(t, resp.Body)["value"].([]any); !ok || len(v) != 0 {
			t.Errorf("$top=0 answered %s, want no entities", truncate(resp.Body))
		}
		if resp.Header.Get("x-ms-continuation-NextPartitionKey") != "" {
			t.Error("$top=0 carries a continuation")
		}
		resp = srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: "$select=&$filter=" + url.QueryEscape("PartitionKey eq '0'")})
		if v, _ := decodeJSON(t, resp.Body)["value"].([]any); len(v) != 1 || v[0].(map[string]any)["Name"] != "x" {
			t.Errorf("$select= answered %s, want the entity whole", truncate(resp.Body))
		}
		resp = srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables", RawQuery: "$top=0"})
		if v, ok := decodeJSON(t, resp.Body)["value"].([]any); resp.StatusCode != http.StatusOK || !ok || len(v) != 0 {
			t.Errorf("Query Tables $top=0: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		wantRawError(t, srv.Do(t, Request{Method: http.MethodGet, Path: "/nosuchtable0()", RawQuery: "$top=0"}), http.StatusNotFound, "TableNotFound")
		wantRawError(t, srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: "$top=0&$filter=" + url.QueryEscape("'a'")}),
			http.StatusBadRequest, "InvalidInput")
	})

	// "CORS support for the Azure Storage services", Understanding the use
	// of the Vary header: with CORS rules set, every GET and HEAD answer
	// carries Vary: Origin, matched or not, unless the matching rule allows
	// every origin. Runs last: it changes the account's CORS rules.
	t.Run("CORSVary", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r"}`)
		get := func(origin string) *Response {
			h := http.Header{}
			if origin != "" {
				h.Set("Origin", origin)
			}
			return srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "r"), Header: h})
		}
		if v := get("http://evil.example").Header.Get("Vary"); v != "" {
			t.Errorf("no CORS rules: Vary %q", v)
		}
		if _, err := sc.SetProperties(ctxFor(t), aztables.ServiceProperties{Cors: []*aztables.CorsRule{
			{AllowedOrigins: to.Ptr("http://app.example"), AllowedMethods: to.Ptr("GET,PUT"), AllowedHeaders: to.Ptr("*"),
				ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr(int32(60))},
			{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("DELETE"), AllowedHeaders: to.Ptr("*"),
				ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr(int32(60))},
		}}, nil); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct{ origin, vary, allow string }{
			{"http://evil.example", "Origin", ""},
			{"", "Origin", ""},
			{"http://app.example", "Origin", "http://app.example"},
		} {
			resp := get(tc.origin)
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Vary") != tc.vary || resp.Header.Get("Access-Control-Allow-Origin") != tc.allow {
				t.Errorf("GET with Origin %q: %d, Vary %q, Allow-Origin %q; want Vary %q, Allow-Origin %q", tc.origin, resp.StatusCode,
					resp.Header.Get("Vary"), resp.Header.Get("Access-Control-Allow-Origin"), tc.vary, tc.allow)
			}
		}
		// Errors of a GET vary too; writes no rule allows do not.
		if resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "missing"),
			Header: http.Header{"Origin": {"http://evil.example"}}}); resp.Header.Get("Vary") != "Origin" {
			t.Errorf("404 GET: Vary %q", resp.Header.Get("Vary"))
		}
		if resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"post"}`),
			Header: http.Header{"Origin": {"http://evil.example"}}}); resp.Header.Get("Vary") != "" {
			t.Errorf("POST no rule allows: Vary %q", resp.Header.Get("Vary"))
		}
		// A rule open to every origin answers alike for all: no Vary.
		resp := srv.Do(t, Request{Method: http.MethodDelete, Path: entityPath(table, "p", "post"),
			Header: http.Header{"Origin": {"http://any.example"}, "If-Match": {"*"}}})
		if resp.Header.Get("Access-Control-Allow-Origin") != "*" || resp.Header.Get("Vary") != "" {
			t.Errorf("DELETE under the * rule: Allow-Origin %q, Vary %q", resp.Header.Get("Access-Control-Allow-Origin"), resp.Header.Get("Vary"))
		}
	})
}

func isNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64:
		return true
	}
	return false
}
