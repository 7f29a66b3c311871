package prommetrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/prommetrics"
	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store/timedstore"
)

func scrape(t *testing.T, m *prommetrics.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %v", resp.StatusCode, err)
	}
	return string(b)
}

// TestExposition: each observation lands in its series, labelled as the
// docs/serve.md documents them.
func TestExposition(t *testing.T) {
	t.Parallel()
	m := prommetrics.New()
	m.ObserveRequest(httpapi.RequestStats{Operation: "InsertEntity", Account: "devstoreaccount1", Status: 201,
		Duration: 2 * time.Millisecond, BytesIn: 100, BytesOut: 300})
	m.ObserveRequest(httpapi.RequestStats{Operation: "InsertEntity", Account: "devstoreaccount1", Status: 409,
		Code: apierr.EntityAlreadyExists, Duration: time.Millisecond, BytesIn: 100, BytesOut: 200})
	m.ObserveRequest(httpapi.RequestStats{Status: 503, Code: apierr.ServerBusy, Refused: httpapi.RefusedRequest})
	m.ObserveStoreCall(operation.StoreWrite, time.Millisecond, timedstore.OK)
	m.ObserveStoreCall(operation.StoreGetEntity, time.Millisecond, timedstore.Busy)
	m.ObserveGroupCommit(3, time.Millisecond)
	m.ObserveGroupCommit(5, time.Millisecond)

	text := scrape(t, m)
	for _, want := range []string{
		`tablebridge_requests_total{account="devstoreaccount1",operation="InsertEntity",status="201"} 1`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="InsertEntity",status="409"} 1`,
		`tablebridge_requests_total{account="",operation="none",status="503"} 1`,
		`tablebridge_request_duration_seconds_count{operation="InsertEntity"} 2`,
		`tablebridge_request_duration_seconds_bucket{operation="InsertEntity",le="0.001"} 1`,
		`tablebridge_request_body_bytes_total{operation="InsertEntity"} 200`,
		`tablebridge_response_body_bytes_total{operation="InsertEntity"} 500`,
		`tablebridge_refused_requests_total{bound="request"} 1`,
		`tablebridge_store_call_duration_seconds_count{method="Write",outcome="ok"} 1`,
		`tablebridge_store_call_duration_seconds_count{method="GetEntity",outcome="busy"} 1`,
		`tablebridge_group_commit_writes_sum 8`,
		`tablebridge_group_commit_writes_bucket{le="4"} 1`,
		`tablebridge_group_commit_duration_seconds_count 2`,
		`go_goroutines `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q", want)
		}
	}
	if t.Failed() {
		t.Logf("exposition:\n%s", text)
	}
}
