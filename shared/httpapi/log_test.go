package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

// loggedHandler is the handler of tablebridge serve over a fresh bolt store,
// logging JSON lines into the returned buffer.
func loggedHandler(t *testing.T, logRequests bool) (*httpapi.Handler, *bytes.Buffer) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "tablebridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var buf bytes.Buffer
	h, err := httpapi.NewHandler(newService(t, st), []auth.Account{auth.DevStoreAccount()}, httpapi.Options{
		LogRequests: logRequests,
		Logger:      slog.New(slog.NewJSONHandler(&buf, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, &buf
}

// signedRequest is a request as the SDKs send it, signed with key.
func signedRequest(t *testing.T, ctx context.Context, method, path string, key []byte) *http.Request {
	t.Helper()
	r := httptest.NewRequestWithContext(ctx, method, "http://127.0.0.1:10002/devstoreaccount1"+path, nil)
	r.Header.Set("x-ms-version", "2019-02-02")
	r.Header.Set("Accept", "application/json;odata=nometadata")
	if err := auth.SignSharedKeyLite(r, auth.DevStoreAccountName, key); err != nil {
		t.Fatal(err)
	}
	return r
}

func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if raw == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// TestRequestLogLines: -log-requests writes one line per request with the
// latency in milliseconds, and the Azure error code of every error answer,
// the 403s of authentication included.
func TestRequestLogLines(t *testing.T) {
	t.Parallel()
	h, buf := loggedHandler(t, true)
	key := auth.DevStoreAccount().Keys[0]
	wrongKey := bytes.Repeat([]byte{7}, len(key))
	for _, tc := range []struct {
		name   string
		path   string
		key    []byte
		status int
		code   string
	}{
		{"ok", "/Tables", key, http.StatusOK, ""},
		{"wrong key", "/Tables", wrongKey, http.StatusForbidden, "AuthenticationFailed"},
		{"missing table", "/nosuchtable()", key, http.StatusNotFound, "TableNotFound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			buf.Reset()
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, signedRequest(t, context.Background(), http.MethodGet, tc.path, tc.key))
			if rec.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.status, rec.Body)
			}
			lines := logLines(t, buf)
			if len(lines) != 1 {
				t.Fatalf("%d log lines, want 1: %s", len(lines), buf)
			}
			line := lines[0]
			if line["msg"] != "request" || line["level"] != "INFO" || line["status"] != float64(tc.status) {
				t.Errorf("line %v", line)
			}
			if ms, ok := line["ms"].(float64); !ok || ms <= 0 || ms > 60_000 {
				t.Errorf("ms = %v, want the latency in milliseconds", line["ms"])
			}
			if _, ok := line["latency"]; ok {
				t.Errorf("raw nanosecond latency still logged: %v", line)
			}
			if got, _ := line["code"].(string); got != tc.code {
				t.Errorf("code = %q, want %q (x-ms-error-code %q)", got, tc.code, rec.Header().Get("x-ms-error-code"))
			}
		})
	}
}

// TestCancelledRequestIsNotAnInternalError: a client that goes away
// mid-request is logged once at info level as a cancelled request, with or
// without -log-requests, never as ERROR InternalError.
func TestCancelledRequestIsNotAnInternalError(t *testing.T) {
	t.Parallel()
	for _, logRequests := range []bool{false, true} {
		name := "default"
		if logRequests {
			name = "log-requests"
		}
		t.Run(name, func(t *testing.T) {
			h, buf := loggedHandler(t, logRequests)
			ctx, cancel := context.WithCancel(context.Background())
			req := signedRequest(t, ctx, http.MethodGet, "/Tables", auth.DevStoreAccount().Keys[0])
			cancel() // the client closed its connection
			h.ServeHTTP(httptest.NewRecorder(), req)
			lines := logLines(t, buf)
			if len(lines) != 1 {
				t.Fatalf("%d log lines, want 1: %s", len(lines), buf)
			}
			line := lines[0]
			if line["level"] != "INFO" || strings.Contains(buf.String(), "InternalError") {
				t.Fatalf("logged %v", line)
			}
			if logRequests {
				if line["msg"] != "request" || line["status"] != float64(499) || line["cancelled"] != true {
					t.Fatalf("request line %v, want status 499 and cancelled", line)
				}
			} else if line["msg"] != "request cancelled by the client" || line["operation"] != "QueryTables" {
				t.Fatalf("line %v", line)
			}
		})
	}
}

// TestRequestLogItemsRead: a query's line carries the items the store read
// for it (store.Page.ItemsRead), so an operator sees what each query cost;
// other operations' lines do not.
func TestRequestLogItemsRead(t *testing.T) {
	t.Parallel()
	h, buf := loggedHandler(t, true)
	key := auth.DevStoreAccount().Keys[0]
	send := func(method, path, body string) {
		t.Helper()
		r := signedRequest(t, context.Background(), method, path, key)
		if body != "" {
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
			r.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	send(http.MethodPost, "/Tables", `{"TableName":"logged"}`)
	for _, pk := range []string{"a", "b", "c", "d"} {
		send(http.MethodPost, "/logged", `{"PartitionKey":"`+pk+`","RowKey":"r"}`)
	}
	buf.Reset()
	send(http.MethodGet, "/logged()?$filter="+url.QueryEscape("PartitionKey ge 'b' and PartitionKey lt 'd'"), "")
	send(http.MethodGet, "/logged(PartitionKey='a',RowKey='r')", "")
	lines := logLines(t, buf)
	if len(lines) != 2 {
		t.Fatalf("%d log lines, want 2: %s", len(lines), buf)
	}
	if lines[0]["operation"] != "QueryEntities" || lines[0]["itemsRead"] != float64(2) {
		t.Errorf("query line %v: want itemsRead 2", lines[0])
	}
	if _, ok := lines[1]["itemsRead"]; ok {
		t.Errorf("a point read's line carries itemsRead: %v", lines[1])
	}
}

// TestCancelledBatchIsNotAnInternalError: the same for a $batch, whose
// failed operation is answered inside a 202.
func TestCancelledBatchIsNotAnInternalError(t *testing.T) {
	t.Parallel()
	h, buf := loggedHandler(t, false)
	key := auth.DevStoreAccount().Keys[0]
	create := signedRequest(t, context.Background(), http.MethodPost, "/Tables", key)
	create.Body = io.NopCloser(strings.NewReader(`{"TableName":"batched"}`))
	create.Header.Set("Content-Type", "application/json")
	if err := auth.SignSharedKeyLite(create, auth.DevStoreAccountName, key); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, create)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create table: %d %s", rec.Code, rec.Body)
	}
	buf.Reset()
	tmpl := newBatchTemplate("batched", 3)
	ctx, cancel := context.WithCancel(context.Background())
	req := signedRequest(t, ctx, http.MethodPost, "/$batch", key)
	req.Body = io.NopCloser(bytes.NewReader(tmpl.body))
	req.Header.Set("Content-Type", tmpl.contentType)
	cancel()
	h.ServeHTTP(httptest.NewRecorder(), req)
	lines := logLines(t, buf)
	if len(lines) != 1 || lines[0]["level"] != "INFO" || lines[0]["msg"] != "request cancelled by the client" {
		t.Fatalf("logged:\n%s", buf)
	}
}
