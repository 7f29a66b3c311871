package lambdafn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
)

// The handler overhead of a point read, without DynamoDB: the event (as
// the runtime hands it over) through the adapter, Shared Key Lite
// verification, routing, the store guard, the read from an embedded bbolt
// store, JSON encoding and the proxy response. BenchmarkStoreGetEntity is
// the store's share, so the difference is the Lambda path's own cost.
//
//	go test -run '^$' -bench . -benchmem ./shared/lambdafn/

func benchSetup(b *testing.B) (*functions, events.APIGatewayProxyRequest) {
	st := openBolt(b)
	fs := newFunctions(b, st)
	createTable(b, fs, "bench")
	resp := fs.do(b, newRequest(b, req{method: http.MethodPost, path: "/bench",
		body:   `{"PartitionKey":"p","RowKey":"r","Name":"Ada","Score":36,"Born@odata.type":"Edm.DateTime","Born":"1815-12-10T00:00:00Z"}`,
		header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}}), stageOpts())
	if resp.StatusCode != http.StatusNoContent {
		b.Fatalf("insert: %d", resp.StatusCode)
	}
	ev, fn, err := gatewayevent.NewEvent(newRequest(b, req{method: http.MethodGet, path: "/bench(PartitionKey='p',RowKey='r')",
		header: map[string]string{"Accept": "application/json;odata=minimalmetadata"}}), stageOpts())
	if err != nil || fn.Name != "readresource" {
		b.Fatalf("event: %v %s", err, fn.Name)
	}
	return fs, ev
}

// BenchmarkInvokeGetEntity: Handler.ServeV1 on a decoded event.
func BenchmarkInvokeGetEntity(b *testing.B) {
	fs, ev := benchSetup(b)
	h := fs.byName["readresource"]
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp := h.ServeV1(ctx, ev)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%d %s", resp.StatusCode, resp.Body)
		}
	}
}

// BenchmarkInvokeGetEntityJSON is Handler.Invoke, what the runtime calls:
// decoding the event JSON (either format) and encoding the response JSON.
func BenchmarkInvokeGetEntityJSON(b *testing.B) {
	fs, ev := benchSetup(b)
	h := fs.byName["readresource"]
	payload, err := json.Marshal(ev)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		out, err := h.Invoke(ctx, payload)
		if err != nil || !bytes.Contains(out[:20], []byte(`"statusCode":200`)) {
			b.Fatalf("%v %.100s", err, out)
		}
	}
}

// BenchmarkStoreGetEntity is the bbolt read alone.
func BenchmarkStoreGetEntity(b *testing.B) {
	st := openBolt(b)
	fs := newFunctions(b, st)
	createTable(b, fs, "bench")
	resp := fs.do(b, newRequest(b, req{method: http.MethodPost, path: "/bench", body: `{"PartitionKey":"p","RowKey":"r","Name":"Ada"}`,
		header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}}), stageOpts())
	if resp.StatusCode != http.StatusNoContent {
		b.Fatalf("insert: %d", resp.StatusCode)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.GetEntity(ctx, devAccount, "bench", "p", "r"); err != nil {
			b.Fatal(err)
		}
	}
}
