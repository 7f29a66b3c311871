package prommetrics_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/internal/prommetrics"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/stack"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/timedstore"
)

// BenchmarkGetEntity measures what the metrics cost a point read through
// the handler (no network): off, and with serve -metrics's wiring (the
// request observer and the timed store).
func BenchmarkGetEntity(b *testing.B) {
	for _, mode := range []string{"off", "metrics"} {
		b.Run(mode, func(b *testing.B) {
			bolt, err := boltstore.Open(filepath.Join(b.TempDir(), "tablebridge.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer bolt.Close()
			var st store.Store = bolt
			opts := httpapi.Options{}
			if mode == "metrics" {
				m := prommetrics.New()
				st = timedstore.New(bolt, m.ObserveStoreCall)
				opts.Observe = m.ObserveRequest
			}
			acc := auth.DevStoreAccount()
			h, err := stack.New(st, []auth.Account{acc}, opts)
			if err != nil {
				b.Fatal(err)
			}
			send := func(method, path, body string) *httptest.ResponseRecorder {
				var r *http.Request
				if body == "" {
					r = httptest.NewRequest(method, "http://127.0.0.1:10002/devstoreaccount1"+path, nil)
				} else {
					r = httptest.NewRequest(method, "http://127.0.0.1:10002/devstoreaccount1"+path, strings.NewReader(body))
					r.Header.Set("Content-Type", "application/json")
				}
				r.Header.Set("x-ms-version", "2019-02-02")
				r.Header.Set("Accept", "application/json;odata=nometadata")
				if err := auth.SignSharedKeyLite(r, acc.Name, acc.Keys[0]); err != nil {
					b.Fatal(err)
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w
			}
			if w := send(http.MethodPost, "/Tables", `{"TableName":"bench"}`); w.Code != http.StatusCreated {
				b.Fatalf("create: %d %s", w.Code, w.Body)
			}
			if w := send(http.MethodPost, "/bench", `{"PartitionKey":"p","RowKey":"r","N":1}`); w.Code != http.StatusCreated {
				b.Fatalf("insert: %d %s", w.Code, w.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if w := send(http.MethodGet, "/bench(PartitionKey='p',RowKey='r')", ""); w.Code != http.StatusOK {
					b.Fatalf("get: %d", w.Code)
				}
			}
		})
	}
}
