package lambdafn_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestClientCompatOnLambda runs, through the Lambda functions, the requests
// of real clients where tablebridge was seen to differ from Azure (the
// internal/protocoltest suites cover them in depth on both stores): each
// reaches its function whole and gets Azure's answer.
func TestClientCompatOnLambda(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "compat")
	// CORS rules first: each function caches them for a few seconds (Azure
	// documents up to 30 s for a change to apply). With rules set, every GET
	// answer carries Vary: Origin, matched or not (checked last).
	props := `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors><CorsRule><AllowedOrigins>https://app.example.com</AllowedOrigins>` +
		`<AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>*</ExposedHeaders><AllowedHeaders>*</AllowedHeaders></CorsRule></Cors></StorageServiceProperties>`
	resp := fs.do(t, newRequest(t, req{method: http.MethodPut, path: "/", query: url.Values{"restype": {"service"}, "comp": {"properties"}},
		body: props, header: map[string]string{"Content-Type": "application/xml"}}), stageOpts())
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("set CORS rules: %d %s", resp.StatusCode, readAll(t, resp))
	}
	entity := "/compat(PartitionKey='p',RowKey='r')"
	jsonHeader := map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}
	// Azure Storage Explorer writes typed values as strings.
	resp = fs.do(t, newRequest(t, req{method: http.MethodPost, path: "/compat", header: jsonHeader,
		body: `{"PartitionKey":"p","RowKey":"r","b":"false","b@odata.type":"Edm.Boolean","i":"32","i@odata.type":"Edm.Int32","d":"1.5","d@odata.type":"Edm.Double"}`}), stageOpts())
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("insert typed strings: %d %s", resp.StatusCode, readAll(t, resp))
	}
	q := func(filter string) url.Values { return url.Values{"$filter": {filter}} }
	for _, tc := range []struct {
		name     string
		r        req
		status   int
		code     string
		contains string
	}{
		// OData v3: a Boolean literal is a condition.
		{"FilterTrue", req{method: http.MethodGet, path: "/compat()", query: q("(true and RowKey eq 'r') and (false or b eq false)")},
			http.StatusOK, "", `"i":32`},
		{"FilterFalse", req{method: http.MethodGet, path: "/compat()", query: q("false")}, http.StatusOK, "", `"value":[]`},
		{"QueryTablesTrue", req{method: http.MethodGet, path: "/Tables", query: q("true")}, http.StatusOK, "", `"compat"`},
		// Only * and weak ETags are conditions.
		{"WeakETagWrong", req{method: http.MethodPatch, path: entity, body: `{"x":1}`,
			header: map[string]string{"Content-Type": "application/json", "If-Match": `w/"wrong"`}}, http.StatusPreconditionFailed, "UpdateConditionNotSatisfied", ""},
		{"StrongETag", req{method: http.MethodDelete, path: entity,
			header: map[string]string{"If-Match": `"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`}}, http.StatusBadRequest, "InvalidInput", ""},
		// x-ms-version must be a service version.
		{"InvalidVersion", req{method: http.MethodGet, path: "/Tables", header: map[string]string{"x-ms-version": "invalid"}},
			http.StatusBadRequest, "InvalidHeaderValue", ""},
		// Storage Explorer's first page.
		{"TopZero", req{method: http.MethodGet, path: "/compat()", query: url.Values{"$select": {""}, "$filter": {"PartitionKey eq '0'"}, "$top": {"0"}}},
			http.StatusOK, "", `"value":[]`},
		// Stats only on the secondary, which is read-only.
		{"StatsOnPrimary", req{method: http.MethodGet, path: "/", query: url.Values{"restype": {"service"}, "comp": {"stats"}}},
			http.StatusBadRequest, "InvalidQueryParameterValue", ""},
		{"StatsOnSecondary", req{method: http.MethodGet, path: "/", location: devAccount + "-secondary", query: url.Values{"restype": {"service"}, "comp": {"stats"}}},
			http.StatusOK, "", "<Status>live</Status>"},
		{"ReadOnSecondary", req{method: http.MethodGet, path: entity, location: devAccount + "-secondary"}, http.StatusOK, "", `"b":false`},
		{"WriteOnSecondary", req{method: http.MethodDelete, path: entity, location: devAccount + "-secondary", header: map[string]string{"If-Match": "*"}},
			http.StatusForbidden, "InsufficientAccountPermissions", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := fs.do(t, newRequest(t, tc.r), stageOpts())
			body := readAll(t, resp)
			if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code || !strings.Contains(body, tc.contains) {
				t.Fatalf("got %d %q, want %d %q containing %q: %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.status, tc.code, tc.contains, body)
			}
		})
	}

	resp = fs.do(t, newRequest(t, req{method: http.MethodGet, path: entity, header: map[string]string{"Origin": "https://evil.example"}}), stageOpts())
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Vary") != "Origin" || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("GET from an origin no rule allows: %d, Vary %q, Allow-Origin %q", resp.StatusCode, resp.Header.Get("Vary"), resp.Header.Get("Access-Control-Allow-Origin"))
	}
}
