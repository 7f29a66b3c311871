package loadgen

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// These tests hold the bench to what the official Go SDK (aztables v1.4.1)
// puts on the wire: they run the SDK and the bench against the same
// recording server and compare the requests.

// Continuation tokens the recorder hands out; '!' and '-' exercise query
// escaping.
const (
	testNextPK = "1!12!cS0wMDAwMDA-"
	testNextRK = "1!16!MDAwMDAwMDAwMA--"
)

type capturedRequest struct {
	method     string
	requestURI string
	path       string // URL.EscapedPath as the server parsed it
	rawQuery   string
	header     http.Header
	body       []byte
}

// recorder records every request. A query's first page answers with a
// continuation and its second page without; everything else gets a 400
// (which the SDK does not retry).
type recorder struct {
	mu   sync.Mutex
	reqs []capturedRequest
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, capturedRequest{
		method: r.Method, requestURI: r.RequestURI, path: r.URL.EscapedPath(),
		rawQuery: r.URL.RawQuery, header: r.Header.Clone(), body: body,
	})
	rec.mu.Unlock()
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "()") {
		if r.URL.Query().Get("NextPartitionKey") == "" {
			w.Header().Set("x-ms-continuation-NextPartitionKey", testNextPK)
			w.Header().Set("x-ms-continuation-NextRowKey", testNextRK)
		}
		w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
		io.WriteString(w, `{"value":[]}`)
		return
	}
	w.Header().Set("x-ms-error-code", "InvalidInput")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, `{"odata.error":{"code":"InvalidInput","message":{"lang":"en-US","value":"recorded"}}}`)
}

func (rec *recorder) take() []capturedRequest {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.reqs
	rec.reqs = nil
	return out
}

func newRecorder(t *testing.T) (*recorder, string) {
	t.Helper()
	rec := &recorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv.URL + "/" + auth.DevStoreAccountName
}

func newSDKClients(t *testing.T, endpoint, table string) (*aztables.ServiceClient, *aztables.Client) {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential(auth.DevStoreAccountName, auth.DevStoreAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := aztables.NewServiceClientWithSharedKey(endpoint, cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	return svc, svc.NewClient(table)
}

// newTestRun builds a run against endpoint with small, deterministic
// settings.
func newTestRun(t *testing.T, endpoint string, adjust func(*Config)) *run {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Endpoint = endpoint
	cfg.Clients = 2
	cfg.Duration = 0
	cfg.Ops = 1
	cfg.Seed = 42
	if adjust != nil {
		adjust(&cfg)
	}
	r, err := newRun(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.client.CloseIdleConnections)
	return r
}

func TestSignatureMatchesAztables(t *testing.T) {
	t.Parallel()
	rec, endpoint := newRecorder(t)
	svc, client := newSDKClients(t, endpoint, "sigtable")
	ctx := context.Background()
	entity := []byte(`{"PartitionKey":"p","RowKey":"r","N":1}`)
	calls := []struct {
		name string
		call func()
	}{
		{"create table", func() { client.CreateTable(ctx, nil) }},
		{"insert", func() { client.AddEntity(ctx, entity, nil) }},
		{"get with quotes, spaces and non-ASCII in keys", func() { client.GetEntity(ctx, "it's a key", "ключ (1)", nil) }},
		{"query with continuation", func() {
			filter := "PartitionKey eq 'p'"
			pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
			pager.NextPage(ctx)
			pager.NextPage(ctx)
		}},
		{"batch", func() {
			client.SubmitTransaction(ctx, []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: entity}}, nil)
		}},
		{"table ACL (comp=acl)", func() { client.GetAccessPolicy(ctx, nil) }},
		{"service properties (comp=properties)", func() { svc.GetProperties(ctx, nil) }},
		{"delete table", func() { client.Delete(ctx, nil) }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			c.call()
			reqs := rec.take()
			if len(reqs) == 0 {
				t.Fatal("the SDK sent nothing")
			}
			for _, req := range reqs {
				want := req.header.Get("Authorization")
				date := req.header.Get("x-ms-date")
				got := signedAuthorization(t, "http://127.0.0.1"+req.requestURI, date)
				if got != want {
					t.Errorf("%s %s:\n got %s\nwant %s", req.method, req.requestURI, got, want)
				}
			}
		})
	}
}

// TestRequestsMatchAztables sends each bench operation and the SDK's
// equivalent and compares what reached the server.
func TestRequestsMatchAztables(t *testing.T) {
	t.Parallel()
	rec, endpoint := newRecorder(t)
	r := newTestRun(t, endpoint, func(c *Config) { c.QueryPartitions = 1; c.BatchSize = 3 })
	_, client := newSDKClients(t, endpoint, r.table)
	ctx := context.Background()
	w := r.newWorker(3)
	headers := []string{"Accept", "Content-Type", "Dataserviceversion", "X-Ms-Version", "Prefer", "Content-Length"}

	compare := func(t *testing.T, bench, sdk []capturedRequest, sameBody bool) {
		t.Helper()
		if len(bench) != len(sdk) {
			t.Fatalf("bench sent %d requests, SDK %d", len(bench), len(sdk))
		}
		for i := range bench {
			b, s := bench[i], sdk[i]
			if b.method != s.method || b.requestURI != s.requestURI {
				t.Errorf("request %d: bench %s %s, SDK %s %s", i, b.method, b.requestURI, s.method, s.requestURI)
			}
			for _, h := range headers {
				if b.header.Get(h) != s.header.Get(h) {
					t.Errorf("request %d header %s: bench %q, SDK %q", i, h, b.header.Get(h), s.header.Get(h))
				}
			}
			if sameBody && string(b.body) != string(s.body) {
				t.Errorf("request %d body:\nbench %s\n  SDK %s", i, b.body, s.body)
			}
		}
	}

	t.Run("insert", func(t *testing.T) {
		w.insertOne(ctx)
		bench := rec.take()
		client.AddEntity(ctx, bench[0].body, nil)
		compare(t, bench, rec.take(), true)
	})
	t.Run("get", func(t *testing.T) {
		r.inserted = []insertedKey{{worker: 3, index: 1234}}
		defer func() { r.inserted = nil }()
		w.getOne(ctx)
		bench := rec.take()
		client.GetEntity(ctx, "i0003-000001", "0000001234", nil)
		compare(t, bench, rec.take(), false)
	})
	t.Run("query with continuation", func(t *testing.T) {
		w.scanPartition(ctx)
		bench := rec.take()
		filter := "PartitionKey eq 'q-000000'"
		pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
		for pager.More() {
			if _, err := pager.NextPage(ctx); err != nil {
				t.Fatal(err)
			}
		}
		compare(t, bench, rec.take(), false)
	})
	t.Run("batch body is byte-identical", func(t *testing.T) {
		w.batchOne(ctx)
		bench := rec.take()
		if len(bench) != 1 {
			t.Fatalf("bench sent %d requests", len(bench))
		}
		actions := batchActions(t, bench[0].body)
		client.SubmitTransaction(ctx, actions, nil)
		sdk := rec.take()
		if len(sdk) != 1 {
			t.Fatalf("SDK sent %d requests", len(sdk))
		}
		// The boundaries are random UUIDs; give the SDK's ours.
		sdkBody := replaceBoundaries(t, string(sdk[0].body), sdk[0].header.Get("Content-Type"), bench[0].header.Get("Content-Type"), string(bench[0].body))
		sdk[0].body = []byte(sdkBody)
		sdk[0].header.Set("Content-Type", bench[0].header.Get("Content-Type"))
		compare(t, bench, sdk, true)
	})
}
