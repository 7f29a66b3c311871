package lambdafn_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/lambdafn"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

const (
	devAccount = auth.DevStoreAccountName
	stage      = "Prod"
	apiHost    = "abcdef1234.execute-api.eu-west-1.amazonaws.com"
)

// openBolt opens a fresh embedded store for one test.
func openBolt(t testing.TB) store.Store {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "tablebridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// logBuffer collects JSON log lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines decodes every JSON line logged so far.
func (l *logBuffer) lines(t testing.TB) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// functions holds one handler per function over one store, as a
// deployment has one Lambda per function over one set of tables.
type functions struct {
	byName map[string]*lambdafn.Handler
	log    *logBuffer
	// newHandler builds a function's handler as byName's were built, with
	// a custom domain's base path.
	newHandler func(fn deploy.Function, basePath string) (*lambdafn.Handler, error)
}

func newFunctions(t testing.TB, st store.Store) *functions {
	t.Helper()
	return newFunctionsWithTokens(t, st, nil)
}

// newFunctionsWithTokens is newFunctions with bearer tokens accepted as
// tokens verifies them (nil: refused).
func newFunctionsWithTokens(t testing.TB, st store.Store, tokens auth.TokenVerifier) *functions {
	t.Helper()
	fs := &functions{byName: map[string]*lambdafn.Handler{}, log: &logBuffer{}}
	logger := slog.New(lambdafn.NewLogHandler(slog.NewJSONHandler(fs.log, nil)))
	fs.newHandler = func(fn deploy.Function, basePath string) (*lambdafn.Handler, error) {
		return lambdafn.NewHandler(fn, st, []auth.Account{auth.DevStoreAccount()}, lambdafn.Options{BasePath: basePath,
			HTTP: httpapi.Options{Logger: logger.With("function", fn.Name), LogRequests: true, Tokens: tokens}})
	}
	for _, fn := range deploy.Functions() {
		h, err := fs.newHandler(fn, "")
		if err != nil {
			t.Fatal(err)
		}
		fs.byName[fn.Name] = h
	}
	return fs
}

// do sends r the way API Gateway would: as an event (through JSON, as
// Lambda delivers it) to the function its route names, and turns the
// answer back into a response.
func (fs *functions) do(t testing.TB, r *http.Request, opts gatewayevent.EventOptions) *http.Response {
	t.Helper()
	ev, fn, err := gatewayevent.NewEvent(r, opts)
	if err != nil {
		t.Fatal(err)
	}
	return fs.invoke(t, fn.Name, ev)
}

func (fs *functions) invoke(t testing.TB, fn string, ev events.APIGatewayProxyRequest) *http.Response {
	t.Helper()
	h := fs.byName[fn]
	if h == nil {
		t.Fatalf("no function %q", fn)
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("Invoke returned an error: %v", err)
	}
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("not a format 1.0 response: %v: %s", err, out)
	}
	return toHTTPResponse(t, resp)
}

// toHTTPResponse is what API Gateway makes of a proxy response.
func toHTTPResponse(t testing.TB, resp events.APIGatewayProxyResponse) *http.Response {
	t.Helper()
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			t.Fatalf("response body is not base64: %v", err)
		}
	}
	h := http.Header{}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return &http.Response{StatusCode: resp.StatusCode, Header: h, Body: io.NopCloser(bytes.NewReader(body))}
}

func readAll(t testing.TB, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// req is a raw request for newRequest.
type req struct {
	method string
	// path is below the account, percent-encoded as on the wire.
	path   string
	query  url.Values
	header map[string]string
	body   string
	// prefix goes before /account: "/Prod" (the default), "/tables" for a
	// custom domain base path, or "-" for none.
	prefix string
	// signedPrefix, when set, is the prefix the client signed instead.
	signedPrefix string
	sign         func(*http.Request, string, []byte) error
	date         time.Time
	// location replaces the account in the path ("devstoreaccount1-secondary");
	// the request is still signed as the account.
	location string
}

// newRequest builds a request as a client sends it to API Gateway, signed
// with the emulator key (SharedKeyLite unless r.sign says otherwise).
func newRequest(t testing.TB, r req) *http.Request {
	t.Helper()
	prefix := r.prefix
	switch prefix {
	case "":
		prefix = "/" + stage
	case "-":
		prefix = ""
	}
	location := r.location
	if location == "" {
		location = devAccount
	}
	full := prefix + "/" + location + r.path
	u := &url.URL{Scheme: "https", Host: apiHost, RawQuery: r.query.Encode()}
	if err := setEscapedPath(u, full); err != nil {
		t.Fatal(err)
	}
	var body io.Reader = http.NoBody
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(r.method, u.String(), body)
	if err != nil {
		t.Fatal(err)
	}
	hr.RemoteAddr = "198.51.100.23:40000"
	hr.Header.Set("x-ms-version", "2019-02-02")
	hr.Header.Set("Accept", "application/json;odata=nometadata")
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	date := r.date
	if date.IsZero() {
		date = time.Now()
	}
	hr.Header.Set("x-ms-date", date.UTC().Format(http.TimeFormat))
	if r.sign == nil {
		r.sign = auth.SignSharedKeyLite
	}
	signReq := hr
	if r.signedPrefix != "" {
		signReq = hr.Clone(context.Background())
		su := *hr.URL
		if err := setEscapedPath(&su, r.signedPrefix+"/"+location+r.path); err != nil {
			t.Fatal(err)
		}
		signReq.URL = &su
	}
	if err := r.sign(signReq, devAccount, auth.DevStoreAccount().Keys[0]); err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", signReq.Header.Get("Authorization"))
	return hr
}

func setEscapedPath(u *url.URL, escaped string) error {
	p, err := url.PathUnescape(escaped)
	if err != nil {
		return err
	}
	u.Path, u.RawPath = p, escaped
	return nil
}

func stageOpts() gatewayevent.EventOptions { return gatewayevent.EventOptions{Stage: stage} }
