package lambdafn_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
)

// through sends r to the function its profile routes it to, as the event
// built from aws-lambda-go's published sample for that profile, through
// Handler.Invoke (JSON in, JSON out, as the runtime calls it), and reads
// the answer in the event's format.
func (fs *functions) through(t testing.TB, r *http.Request, o gatewayevent.Options) gatewayevent.Response {
	t.Helper()
	payload, fn, err := gatewayevent.Build(r, o)
	if err != nil {
		t.Fatal(err)
	}
	h := fs.byName[fn.Name]
	if o.BasePath != "" {
		// The deployment's base path is the function's configuration.
		if h, err = fs.newHandler(fn, o.BasePath); err != nil {
			t.Fatal(err)
		}
	}
	out, err := h.Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("Invoke: %v", err)
	}
	resp, err := gatewayevent.DecodeResponse(o.Profile, out)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// Key spellings of the SDKs (see auth.entityKeySpellings).
func escapeStrict(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func escapeJS(s string) string {
	out := escapeStrict(s)
	for _, c := range "!*'()" {
		out = strings.ReplaceAll(out, fmt.Sprintf("%%%02X", c), string(c))
	}
	return out
}

// TestPayloadFormats: every front door's event shape (REST API 1.0, HTTP
// API 2.0 on every published sample, Function URL 2.0), on every mount
// (stage, $default, custom domain with and without base path), serves
// keys with %, space, quote, comma and non-ASCII characters in every SDK's
// spelling, signed with SharedKey and SharedKeyLite over the path the
// client sent, and answers in the event's format with every header.
func TestPayloadFormats(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	const domain = "tables.example.com"
	mounts := []struct {
		name   string
		o      gatewayevent.Options
		prefix string // what the client puts before /account
	}{
		{"REST API, stage", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: "Prod"}, "/Prod"},
		{"REST API, custom domain with base path", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: "Prod", CustomDomain: domain, BasePath: "tables"}, "/tables"},
		{"REST API, custom domain at the root", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, CustomDomain: domain}, ""},
		{"HTTP API, $default stage", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI}, ""},
		{"HTTP API, named stage", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI, Stage: "prod"}, "/prod"},
		{"HTTP API, custom domain with base path", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI, Stage: "prod", CustomDomain: domain, BasePath: "tables"}, "/tables"},
		{"HTTP API, custom domain, base path kept in rawPath", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI, CustomDomain: domain, BasePath: "api/tables", RawPathKeepsBasePath: true}, "/api/tables"},
		{"HTTP API, custom domain at the root", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI, CustomDomain: domain}, ""},
		{"Function URL", gatewayevent.Options{Profile: deploy.ProfileFunctionURL}, ""},
	}
	const pk, rk = "O'Brien, 100% Zürich", "東京 (x)=y+1 & more"
	for i, m := range mounts {
		t.Run(m.name, func(t *testing.T) {
			prefix := m.prefix
			if prefix == "" {
				prefix = "-"
			}
			table := fmt.Sprintf("payload%d", i)
			send := func(t *testing.T, r req, o gatewayevent.Options) gatewayevent.Response {
				t.Helper()
				r.prefix = prefix
				return fs.through(t, newRequest(t, r), o)
			}
			resp := send(t, req{method: http.MethodPost, path: "/Tables", body: `{"TableName":"` + table + `"}`,
				header: map[string]string{"Content-Type": "application/json"}}, m.o)
			if resp.Status != http.StatusCreated || resp.Header.Get("x-ms-request-id") == "" || resp.Header.Get("Content-Type") == "" {
				t.Fatalf("create table: %d %v %s", resp.Status, resp.Header, resp.Body)
			}
			entity, _ := json.Marshal(map[string]any{"PartitionKey": pk, "RowKey": rk, "Name": "a, b & c"})
			resp = send(t, req{method: http.MethodPost, path: "/" + table, body: string(entity),
				header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}}, m.o)
			if resp.Status != http.StatusNoContent || resp.Header.Get("ETag") == "" {
				t.Fatalf("insert: %d %v %s", resp.Status, resp.Header, resp.Body)
			}
			quoted := func(s string) string { return strings.ReplaceAll(s, "'", "''") }
			spellings := map[string]func(string) string{"Go": url.PathEscape, "RFC 3986": escapeStrict, "JavaScript": escapeJS}
			for name, esc := range spellings {
				for signName, sign := range map[string]func(*http.Request, string, []byte) error{"SharedKey": auth.SignSharedKey, "SharedKeyLite": auth.SignSharedKeyLite} {
					t.Run(name+" spelling, "+signName, func(t *testing.T) {
						path := "/" + table + "(PartitionKey='" + esc(quoted(pk)) + "',RowKey='" + esc(quoted(rk)) + "')"
						resp := send(t, req{method: http.MethodGet, path: path, sign: sign}, m.o)
						if resp.Status != http.StatusOK || resp.Header.Get("ETag") == "" {
							t.Fatalf("get %s: %d %s", path, resp.Status, resp.Body)
						}
						var got map[string]any
						if err := json.Unmarshal(resp.Body, &got); err != nil || got["PartitionKey"] != pk || got["RowKey"] != rk {
							t.Fatalf("entity %s: %v", resp.Body, err)
						}
					})
				}
			}
			t.Run("merge with If-Match", func(t *testing.T) {
				path := "/" + table + "(PartitionKey='" + url.PathEscape(quoted(pk)) + "',RowKey='" + url.PathEscape(quoted(rk)) + "')"
				get := send(t, req{method: http.MethodGet, path: path}, m.o)
				resp := send(t, req{method: http.MethodPatch, path: path, body: `{"Extra":"x, y"}`,
					header: map[string]string{"Content-Type": "application/json", "If-Match": get.Header.Get("ETag")}}, m.o)
				if resp.Status != http.StatusNoContent || resp.Header.Get("ETag") == get.Header.Get("ETag") {
					t.Fatalf("merge: %d %v %s", resp.Status, resp.Header, resp.Body)
				}
			})
			t.Run("query with a filter that needs encoding", func(t *testing.T) {
				resp := send(t, req{method: http.MethodGet, path: "/" + table + "()",
					query: url.Values{"$filter": {"Name eq 'a, b & c' and PartitionKey eq '" + quoted(pk) + "'"}}}, m.o)
				if resp.Status != http.StatusOK || !strings.Contains(string(resp.Body), `"x, y"`) {
					t.Fatalf("query: %d %s", resp.Status, resp.Body)
				}
			})
			if m.prefix != "" {
				t.Run("signed without the prefix", func(t *testing.T) {
					resp := send(t, req{method: http.MethodGet, path: "/Tables", signedPrefix: "-"}, m.o)
					if resp.Status != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
						t.Fatalf("got %d %s", resp.Status, resp.Body)
					}
				})
			}
		})
	}
}

// TestPublishedHTTPSamples: the same request through every published HTTP
// API sample (no authorizer, IAM, JWT, Lambda authorizer) is served alike.
func TestPublishedHTTPSamples(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	for _, sample := range gatewayevent.SamplesHTTP {
		t.Run(sample, func(t *testing.T) {
			o := gatewayevent.Options{Profile: deploy.ProfileHTTPAPI, Sample: sample}
			resp := fs.through(t, newRequest(t, req{method: http.MethodGet, path: "/Tables", prefix: "-"}), o)
			if resp.Status != http.StatusOK {
				t.Fatalf("%d %s", resp.Status, resp.Body)
			}
		})
	}
}

// TestUnusableEvents: events that cannot become a request get Azure's 400
// in a format the front door reads, and one log line naming the function
// once.
func TestUnusableEvents(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	h := fs.byName["querytables"]
	for name, payload := range map[string]string{
		"not JSON":             `{`,
		"no method (1.0)":      `{"path":"/devstoreaccount1/Tables"}`,
		"no method (2.0)":      `{"version":"2.0","rawPath":"/devstoreaccount1/Tables","requestContext":{"http":{}}}`,
		"bad base64 (2.0)":     `{"version":"2.0","rawPath":"/devstoreaccount1/Tables","body":"%%%","isBase64Encoded":true,"requestContext":{"http":{"method":"GET"}}}`,
		"broken query (2.0)":   `{"version":"2.0","rawPath":"/devstoreaccount1/Tables","rawQueryString":"a=%zz","requestContext":{"http":{"method":"GET"}}}`,
		"bad requestContext":   `{"httpMethod":"GET","requestContext":[]}`,
		"function URL stray %": `{"version":"2.0","rawPath":"/devstoreaccount1/t%zz","requestContext":{"domainName":"x.lambda-url.us-east-1.on.aws","http":{"method":"GET"}}}`,
		"HTTP API bare % key":  `{"version":"2.0","rawPath":"/devstoreaccount1/t(PartitionKey='100%',RowKey='')","requestContext":{"http":{"method":"GET"}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			before := len(fs.log.lines(t))
			out, err := h.Invoke(context.Background(), []byte(payload))
			if err != nil {
				t.Fatal(err)
			}
			var resp struct {
				StatusCode        int                 `json:"statusCode"`
				Headers           map[string]string   `json:"headers"`
				MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
			}
			if err := json.Unmarshal(out, &resp); err != nil || resp.Headers == nil {
				t.Fatalf("answer %s: %v", out, err)
			}
			if strings.Contains(name, "%") {
				// A % not followed by two hex digits means the path
				// arrived decoded: the event is usable (no "unusable"
				// line), the request only unsigned.
				if resp.StatusCode != http.StatusForbidden {
					t.Fatalf("got %s", out)
				}
				for _, line := range fs.log.lines(t)[before:] {
					if line["msg"] == "unusable API Gateway event" {
						t.Fatalf("usable event logged as unusable: %v", line)
					}
				}
				return
			}
			if resp.StatusCode != http.StatusBadRequest {
				t.Fatalf("got %s", out)
			}
			lines := fs.log.lines(t)[before:]
			if len(lines) != 1 || lines[0]["msg"] != "unusable API Gateway event" {
				t.Fatalf("log lines %v", lines)
			}
		})
	}
	// The "function" key appears once in the raw line.
	raw := fs.log.b.String()
	for _, line := range strings.Split(raw, "\n") {
		if strings.Contains(line, "unusable API Gateway event") && strings.Count(line, `"function"`) != 1 {
			t.Fatalf("line names the function %d times: %s", strings.Count(line, `"function"`), line)
		}
	}
}

// TestHTTPAPIFormat1: an HTTP API event of payload format 1.0 (version
// "1.0") delivers the path decoded; keys with %, space and quotes still
// route and verify.
func TestHTTPAPIFormat1(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "httpone")
	entity := `{"PartitionKey":"100% a'b","RowKey":"東 京"}`
	resp := fs.do(t, newRequest(t, req{method: http.MethodPost, path: "/httpone", body: entity,
		header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}}), stageOpts())
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("insert: %d %s", resp.StatusCode, readAll(t, resp))
	}
	path := "/httpone(PartitionKey='" + url.PathEscape("100% a''b") + "',RowKey='" + url.PathEscape("東 京") + "')"
	payload, fn, err := gatewayevent.Build(newRequest(t, req{method: http.MethodGet, path: path}),
		gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: stage})
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(payload, &ev); err != nil {
		t.Fatal(err)
	}
	decode := func(p string) string {
		d, err := url.PathUnescape(p)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	ev["version"] = "1.0"
	ev["path"] = decode(ev["path"].(string))
	rc := ev["requestContext"].(map[string]any)
	rc["path"] = decode(rc["path"].(string))
	payload, _ = json.Marshal(ev)
	out, err := fs.byName[fn.Name].Invoke(context.Background(), payload)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gatewayevent.DecodeResponse(deploy.ProfileRESTAPI, out)
	if err != nil || got.Status != http.StatusOK || !strings.Contains(string(got.Body), `"100% a'b"`) {
		t.Fatalf("get: %v %d %s", err, got.Status, got.Body)
	}
}
