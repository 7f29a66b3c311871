package lambdafn_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// createTable makes a table through the createtable function.
func createTable(t testing.TB, fs *functions, name string) {
	t.Helper()
	resp := fs.do(t, newRequest(t, req{method: http.MethodPost, path: "/Tables", body: `{"TableName":"` + name + `"}`,
		header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}}), stageOpts())
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("create table %s: %d %s", name, resp.StatusCode, readAll(t, resp))
	}
}

// TestSignedPath: Shared Key signs the path the client sent, stage or
// custom-domain base path included.
func TestSignedPath(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	tests := []struct {
		name       string
		r          req
		opts       gatewayevent.EventOptions
		wantStatus int
		wantCode   string
	}{
		{"SharedKeyLite over the stage-prefixed path", req{method: http.MethodGet, path: "/Tables"},
			stageOpts(), http.StatusOK, ""},
		{"SharedKey over the stage-prefixed path", req{method: http.MethodGet, path: "/Tables", sign: auth.SignSharedKey},
			stageOpts(), http.StatusOK, ""},
		{"custom domain base path", req{method: http.MethodGet, path: "/Tables", prefix: "/tables"},
			gatewayevent.EventOptions{Stage: stage, BasePath: "tables"}, http.StatusOK, ""},
		{"service endpoint with trailing slash", req{method: http.MethodGet, path: "/",
			query: url.Values{"restype": {"service"}, "comp": {"properties"}}},
			stageOpts(), http.StatusOK, ""},
		{"signed without the stage", req{method: http.MethodGet, path: "/Tables", signedPrefix: "-"},
			stageOpts(), http.StatusForbidden, "AuthenticationFailed"},
		{"signed with another stage", req{method: http.MethodGet, path: "/Tables", signedPrefix: "/Beta"},
			stageOpts(), http.StatusForbidden, "AuthenticationFailed"},
		{"signed more than 15 minutes ago", req{method: http.MethodGet, path: "/Tables", date: time.Now().Add(-16 * time.Minute)},
			stageOpts(), http.StatusForbidden, "AuthenticationFailed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := fs.do(t, newRequest(t, tc.r), tc.opts)
			body := readAll(t, resp)
			if resp.StatusCode != tc.wantStatus || resp.Header.Get("x-ms-error-code") != tc.wantCode {
				t.Fatalf("got %d %q, want %d %q: %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.wantStatus, tc.wantCode, body)
			}
		})
	}
}

// TestCommaHeaders: x-ms-date, an ETag in If-Match and Prefer hold commas
// or quotes and must reach the handler whole.
func TestCommaHeaders(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "commas")
	entity := "/commas(PartitionKey='p',RowKey='r')"

	// Prefer: return-content must be honoured (and x-ms-date, with its
	// comma, verified) for the insert to answer 201 with the entity.
	resp := fs.do(t, newRequest(t, req{method: http.MethodPost, path: "/commas",
		body:   `{"PartitionKey":"p","RowKey":"r","Greeting":"Hello, world"}`,
		header: map[string]string{"Content-Type": "application/json", "Prefer": "return-content"}}), stageOpts())
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusCreated || resp.Header.Get("Preference-Applied") != "return-content" {
		t.Fatalf("insert: %d, Preference-Applied %q: %s", resp.StatusCode, resp.Header.Get("Preference-Applied"), body)
	}
	etag := resp.Header.Get("ETag")
	if !strings.HasPrefix(etag, `W/"datetime'`) {
		t.Fatalf("ETag %q", etag)
	}

	// The ETag goes back in If-Match exactly; a mangled one would be 412.
	resp = fs.do(t, newRequest(t, req{method: http.MethodPatch, path: entity, body: `{"Greeting":"Hi, again"}`,
		header: map[string]string{"Content-Type": "application/json", "If-Match": etag}}), stageOpts())
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("merge with If-Match %s: %d %s", etag, resp.StatusCode, readAll(t, resp))
	}
	// And the old one, now stale, is refused.
	resp = fs.do(t, newRequest(t, req{method: http.MethodPatch, path: entity, body: `{"Greeting":"late"}`,
		header: map[string]string{"Content-Type": "application/json", "If-Match": etag}}), stageOpts())
	if resp.StatusCode != http.StatusPreconditionFailed || resp.Header.Get("x-ms-error-code") != "UpdateConditionNotSatisfied" {
		t.Fatalf("merge with a stale ETag: %d %s", resp.StatusCode, readAll(t, resp))
	}

	resp = fs.do(t, newRequest(t, req{method: http.MethodGet, path: entity}), stageOpts())
	var got map[string]any
	if err := json.Unmarshal([]byte(readAll(t, resp)), &got); err != nil || got["Greeting"] != "Hi, again" {
		t.Fatalf("entity after merge: %v (%v)", got, err)
	}
}

// TestGuard: a function refuses the operations it does not serve with 405,
// before touching the store.
func TestGuard(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "guarded")
	tests := []struct {
		name string
		fn   string
		r    req
	}{
		{"create table sent to querytables", "querytables",
			req{method: http.MethodPost, path: "/Tables", body: `{"TableName":"nope"}`, header: map[string]string{"Content-Type": "application/json"}}},
		{"delete table tunnelled through POST", "insertorbatch",
			req{method: http.MethodPost, path: "/Tables('guarded')", header: map[string]string{"X-HTTP-Method": "DELETE"}}},
		{"lower-case tables reaches the {resource} route", "readresource",
			req{method: http.MethodGet, path: "/tables"}},
		{"set service properties sent to getservice", "getservice",
			req{method: http.MethodPut, path: "/", query: url.Values{"restype": {"service"}, "comp": {"properties"}},
				body: `<StorageServiceProperties/>`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev, _, err := gatewayevent.NewEvent(newRequest(t, tc.r), stageOpts())
			if err != nil {
				t.Fatal(err)
			}
			resp := fs.invoke(t, tc.fn, ev)
			body := readAll(t, resp)
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("x-ms-error-code") != "MethodNotAllowed" {
				t.Fatalf("got %d %q: %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
			}
			if !strings.Contains(body, tc.fn) {
				t.Errorf("the message does not name the function: %s", body)
			}
		})
	}
	// The table survived the tunnelled delete.
	if resp := fs.do(t, newRequest(t, req{method: http.MethodGet, path: "/Tables('guarded')"}), stageOpts()); resp.StatusCode != http.StatusOK {
		t.Fatalf("table after refused delete: %d", resp.StatusCode)
	}
}

// TestLiteralMerge: if API Gateway hands a literal MERGE to the ANY route,
// the merge function serves it. This is a check of the handler only: AWS
// documents nothing about extension methods, so the front-door scenarios
// (functions/) merge with PATCH and the X-HTTP-Method tunnel.
func TestLiteralMerge(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "legacy")
	const entity = "/legacy(PartitionKey='p',RowKey='r')"
	merge := func(body string, header map[string]string) {
		t.Helper()
		header["Content-Type"] = "application/json"
		ev, fn, err := gatewayevent.NewEvent(newRequest(t, req{method: "MERGE", path: entity, body: body, header: header}), stageOpts())
		if err != nil {
			t.Fatal(err)
		}
		if fn.Name != "mergeentity" || ev.Resource != operation.ResourceAny {
			t.Fatalf("MERGE routed to %s %s", fn.Name, ev.Resource)
		}
		if resp := fs.invoke(t, fn.Name, ev); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("MERGE %s: %d %s", body, resp.StatusCode, readAll(t, resp))
		}
	}
	merge(`{"A":1}`, map[string]string{})                         // insert or merge
	merge(`{"B":"by MERGE"}`, map[string]string{"If-Match": "*"}) // merge: A stays
	resp := fs.do(t, newRequest(t, req{method: http.MethodGet, path: entity}), stageOpts())
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"A":1`) || !strings.Contains(body, `"B":"by MERGE"`) {
		t.Fatalf("after MERGE: %d %s", resp.StatusCode, body)
	}
}

// TestRequestLogLine: one JSON line per request, with the Lambda and API
// Gateway request ids next to httpapi's fields.
func TestRequestLogLine(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "logged")
	ev, fn, err := gatewayevent.NewEvent(newRequest(t, req{method: http.MethodGet, path: "/logged()"}), stageOpts())
	if err != nil {
		t.Fatal(err)
	}
	before := len(fs.log.lines(t))
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "lambda-req-1"})
	resp := fs.byName[fn.Name].ServeV1(ctx, ev)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query: %d %s", resp.StatusCode, resp.Body)
	}
	lines := fs.log.lines(t)[before:]
	if len(lines) != 1 {
		t.Fatalf("logged %d lines, want 1: %v", len(lines), lines)
	}
	line := lines[0]
	want := map[string]any{
		"msg": "request", "function": "readresource", "operation": "QueryEntities", "account": devAccount,
		"table": "logged", "status": float64(200), "lambdaRequestId": "lambda-req-1", "itemsRead": float64(0),
		"apiRequestId": ev.RequestContext.RequestID, "requestId": resp.MultiValueHeaders["X-Ms-Request-Id"][0],
	}
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s = %v, want %v", k, line[k], v)
		}
	}
	if ms, ok := line["ms"].(float64); !ok || ms <= 0 {
		t.Errorf("no latency in milliseconds (\"ms\"): %v", line)
	}
}

// TestSignedPathReplay: through API Gateway too, a signature covers the
// wire path only. The request signed for entity 'x y' (x%20y on the wire)
// replayed on the path of entity 'x%20y' (x%2520y) is refused, and both
// entities stay as they were.
func TestSignedPathReplay(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "replay")
	for _, pk := range []string{"x y", "x%20y"} {
		resp := fs.do(t, newRequest(t, req{method: http.MethodPost, path: "/replay",
			body:   `{"PartitionKey":"` + pk + `","RowKey":"r"}`,
			header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}}), stageOpts())
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("insert %q: %d %s", pk, resp.StatusCode, readAll(t, resp))
		}
	}
	signedFor := "/replay(PartitionKey='x%20y',RowKey='r')"
	replayedOn := "/replay(PartitionKey='x%2520y',RowKey='r')"
	date := time.Now()
	for _, method := range []string{http.MethodGet, http.MethodDelete} {
		header := map[string]string{"If-Match": "*"}
		signed := newRequest(t, req{method: method, path: signedFor, header: header, date: date})
		replay := newRequest(t, req{method: method, path: replayedOn, header: header, date: date})
		replay.Header.Set("Authorization", signed.Header.Get("Authorization"))
		resp := fs.do(t, replay, stageOpts())
		if body := readAll(t, resp); resp.StatusCode != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
			t.Fatalf("%s signed for %s, sent on %s: %d %s", method, signedFor, replayedOn, resp.StatusCode, body)
		}
	}
	for _, path := range []string{signedFor, replayedOn} {
		resp := fs.do(t, newRequest(t, req{method: http.MethodGet, path: path}), stageOpts())
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s after the replays: %d %s", path, resp.StatusCode, readAll(t, resp))
		}
	}
}

// TestAccountNameCase: through API Gateway too, an account addressed in
// another case is the configured account, not a namespace of its own.
func TestAccountNameCase(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	hr, err := http.NewRequest(http.MethodPost, "https://"+apiHost+"/"+stage+"/DEVSTOREACCOUNT1/Tables",
		strings.NewReader(`{"TableName":"upper"}`))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Prefer", "return-no-content")
	hr.Header.Set("x-ms-version", "2019-02-02")
	hr.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
	if err := auth.SignSharedKeyLite(hr, devAccount, auth.DevStoreAccount().Keys[0]); err != nil {
		t.Fatal(err)
	}
	if resp := fs.do(t, hr, stageOpts()); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("create table through /DEVSTOREACCOUNT1: %d %s", resp.StatusCode, readAll(t, resp))
	}
	resp := fs.do(t, newRequest(t, req{method: http.MethodGet, path: "/Tables('upper')"}), stageOpts())
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK {
		t.Fatalf("the table is not in devstoreaccount1: %d %s", resp.StatusCode, body)
	}
}

// TestOversizeURL: API Gateway's own URL limit comes first, but the
// handler's still holds behind it, in Azure's error shape.
func TestOversizeURL(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	resp := fs.do(t, newRequest(t, req{method: http.MethodGet, path: "/Tables",
		query: url.Values{"$filter": {"TableName eq '" + strings.Repeat("x", httpapi.MaxURLBytes) + "'"}}}), stageOpts())
	if body := readAll(t, resp); resp.StatusCode != http.StatusRequestURITooLong || resp.Header.Get("x-ms-error-code") != "InvalidUri" ||
		resp.Header.Get("x-ms-request-id") == "" {
		t.Fatalf("got %d %q: %.200s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
	}
}
