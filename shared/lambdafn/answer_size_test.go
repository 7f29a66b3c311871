package lambdafn_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Lambda's response limit as it enforces it (Function.ResponseSizeTooLarge
// past 6,291,556 bytes), and the decimal reading of its "6 MB", which the
// tests hold every answer under.
const (
	lambdaResponseLimit = 6_291_556
	sixMB               = 6_000_000
)

// wideEntities is a page too wide for one Lambda response: 1,000 entities
// of 250 Int64 properties, which answered 10.8 MB in full metadata on the
// local server, in one page (docs/aws.md, "Request and answer sizes on AWS").
func wideEntities(pk string, n int) []*model.Entity {
	ts := time.Date(2026, 11, 26, 6, 0, 0, 1234567, time.UTC)
	es := make([]*model.Entity, n)
	for i := range es {
		props := make(map[string]edm.Value, 250)
		for p := range 250 {
			props[fmt.Sprintf("Value%03d", p)] = edm.NewInt64(-1_000_000_000_000_000_000 + int64(i*250+p))
		}
		es[i] = &model.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("row%04d", i), Timestamp: ts, Properties: props}
	}
	return es
}

// TestWideEntitiesFitLambda reads 1,000 wide entities through the Lambda
// handler on every front door (REST API payload 1.0, HTTP API 2.0, Function
// URL 2.0), in full metadata (the largest answer: 10.8 MB in one page
// before answers had a byte budget), following the continuations, and gets
// them all, in order, with every serialized Lambda response under 6 MB.
func TestWideEntitiesFitLambda(t *testing.T) {
	st := openBolt(t)
	fs := newFunctions(t, st)
	const table, n = "wide", 1000
	createTable(t, fs, table)
	es := wideEntities("p", n)
	for i := 0; i < n; i += 100 {
		ops := make([]store.Op, 0, 100)
		for _, e := range es[i : i+100] {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: e})
		}
		if err := st.Write(context.Background(), devAccount, table, ops); err != nil {
			t.Fatal(err)
		}
	}
	doors := []struct {
		name string
		o    gatewayevent.Options
		pre  string
	}{
		{"REST API", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: stage}, ""},
		{"HTTP API", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI}, "-"},
		{"Function URL", gatewayevent.Options{Profile: deploy.ProfileFunctionURL}, "-"},
	}
	for _, door := range doors {
		for _, level := range []string{"fullmetadata"} {
			t.Run(door.name+" "+level, func(t *testing.T) {
				var keys []string
				q := url.Values{}
				largest, pages := 0, 0
				for pages < 100 {
					r := newRequest(t, req{method: http.MethodGet, path: "/" + table + "()", query: q, prefix: door.pre,
						header: map[string]string{"Accept": "application/json;odata=" + level}})
					payload, fn, err := gatewayevent.Build(r, door.o)
					if err != nil {
						t.Fatal(err)
					}
					out, err := fs.byName[fn.Name].Invoke(context.Background(), payload)
					if err != nil {
						t.Fatal(err)
					}
					pages++
					largest = max(largest, len(out))
					if len(out) >= sixMB {
						t.Errorf("page %d: the Lambda response is %d bytes, over 6 MB (Lambda refuses more than %d)", pages, len(out), lambdaResponseLimit)
					}
					resp, err := gatewayevent.DecodeResponse(door.o.Profile, out)
					if err != nil {
						t.Fatal(err)
					}
					if resp.Status != http.StatusOK {
						t.Fatalf("page %d: %d %s", pages, resp.Status, resp.Body)
					}
					var page struct{ Value []struct{ RowKey string } }
					if err := json.Unmarshal(resp.Body, &page); err != nil {
						t.Fatal(err)
					}
					// Every entity whole: its last property is there.
					if got := bytes.Count(resp.Body, []byte(`"Value249":`)); got != len(page.Value) {
						t.Fatalf("page %d: %d entities, %d with their last property", pages, len(page.Value), got)
					}
					for _, e := range page.Value {
						keys = append(keys, e.RowKey)
					}
					npk := resp.Header.Get("x-ms-continuation-NextPartitionKey")
					if npk == "" {
						break
					}
					q = url.Values{"NextPartitionKey": {npk}, "NextRowKey": {resp.Header.Get("x-ms-continuation-NextRowKey")}}
				}
				if len(keys) != n {
					t.Fatalf("read %d of %d entities in %d pages", len(keys), n, pages)
				}
				for i, k := range keys {
					if want := fmt.Sprintf("row%04d", i); k != want {
						t.Fatalf("entity %d is %s, want %s", i, k, want)
					}
				}
				t.Logf("%d entities in %d pages; largest Lambda response %d bytes (limit %d)", n, pages, largest, lambdaResponseLimit)
			})
		}
	}
}
