package protocoltest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// Signing says how Do authenticates a raw request.
type Signing int

const (
	// SharedKeyLite signs as the Go, JS and .NET SDKs do (the default).
	SharedKeyLite Signing = iota
	// SharedKey signs with the full Table service string-to-sign, as the
	// Python SDK does.
	SharedKey
	// Unsigned sends no Authorization header.
	Unsigned
)

// Request is a raw request for protocol cases the SDK cannot express.
type Request struct {
	Method string
	// Path is the path below the account exactly as it goes on the wire
	// (already percent-encoded), e.g. "/Tables" or "/t(PartitionKey='a',RowKey='b')".
	Path string
	// RawQuery is the encoded query string without '?'.
	RawQuery string
	// Header holds extra headers. A header given with no values removes
	// the default of that name.
	Header http.Header
	Body   []byte

	// Account is the account addressed (path-style); devstoreaccount1 when
	// empty.
	Account string
	// Secondary addresses the account's secondary location,
	// /<account>-secondary, signed as the account itself, as the SDKs do.
	Secondary bool
	Signing   Signing
	// Key signs instead of the account's first key (for wrong-key tests).
	Key []byte
	// Date is the signed x-ms-date; now when zero.
	Date time.Time
}

// Response is a raw response with its body read.
type Response struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// DefaultVersion is the x-ms-version the official SDKs send.
const DefaultVersion = "2019-02-02"

// NewRequest builds the signed *http.Request that Do would send.
func (s *Server) NewRequest(t testing.TB, ctx context.Context, r Request) *http.Request {
	t.Helper()
	account := r.Account
	if account == "" {
		account = auth.DevStoreAccountName
	}
	location := account
	if r.Secondary {
		location += "-secondary"
	}
	target := s.AccountURL(location) + r.Path
	if r.RawQuery != "" {
		target += "?" + r.RawQuery
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, target, body)
	if err != nil {
		t.Fatalf("protocoltest: build request %s %s: %v", r.Method, target, err)
	}
	// The headers an SDK sends on every Table call.
	req.Header.Set("x-ms-version", DefaultVersion)
	req.Header.Set("DataServiceVersion", "3.0")
	req.Header.Set("Accept", "application/json;odata=minimalmetadata")
	if r.Body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	date := r.Date
	if date.IsZero() {
		date = s.Now()
	}
	req.Header.Set("x-ms-date", date.UTC().Format(http.TimeFormat))
	for k, vs := range r.Header {
		req.Header.Del(k)
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}

	if r.Signing == Unsigned {
		return req
	}
	key := r.Key
	if key == nil {
		key = s.Account(t, account).Keys[0]
	}
	sign := auth.SignSharedKeyLite
	if r.Signing == SharedKey {
		sign = auth.SignSharedKey
	}
	if err := sign(req, account, key); err != nil {
		t.Fatalf("protocoltest: sign: %v", err)
	}
	return req
}

// Do sends a raw request and reads the whole response.
func (s *Server) Do(t testing.TB, r Request) *Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return s.Send(t, s.NewRequest(t, ctx, r))
}

// Send sends a prepared request (for example one from NewRequest that a
// test altered after signing) and reads the whole response.
func (s *Server) Send(t testing.TB, req *http.Request) *Response {
	t.Helper()
	resp, err := s.HTTPClient().Do(req)
	if err != nil {
		t.Fatalf("protocoltest: %s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("protocoltest: read response of %s %s: %v", req.Method, req.URL, err)
	}
	return &Response{StatusCode: resp.StatusCode, Header: resp.Header, Body: b}
}
