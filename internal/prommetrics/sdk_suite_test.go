package prommetrics_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/tablebridge/tablebridge/internal/prommetrics"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/timedstore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// TestSDKSuiteMetrics runs the Go SDK conformance suite with serve's
// metrics wiring (the request observer, the timed store, the group-commit
// observer) and checks what /metrics then shows. With TABLEBRIDGE_METRICS_OUT
// set, it writes the exposition there (docs/serve.md's excerpt comes from it).
func TestSDKSuiteMetrics(t *testing.T) {
	t.Parallel()
	m := prommetrics.New()
	t.Run("suite", func(t *testing.T) {
		protocoltest.RunSDK(t, func(t *testing.T) *protocoltest.Server {
			st, err := boltstore.Open(filepath.Join(t.TempDir(), "tablebridge.db"), boltstore.WithCommitObserver(m.ObserveGroupCommit))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return protocoltest.New(t, tablebridgetest.WithStore(timedstore.New(st, m.ObserveStoreCall)), tablebridgetest.WithObserve(m.ObserveRequest))
		})
	})
	text := scrape(t, m)
	if out := os.Getenv("TABLEBRIDGE_METRICS_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
			t.Error(err)
		}
	}
	// Every operation the suite drives shows up with its successes.
	for _, series := range []string{
		`tablebridge_requests_total{account="devstoreaccount1",operation="CreateTable",status="201"}`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="InsertEntity",status="201"}`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="InsertEntity",status="409"}`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="QueryEntities",status="200"}`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="EntityGroupTransaction",status="202"}`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="GetEntity",status="404"}`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="QueryTables",status="403"}`,
		`tablebridge_request_duration_seconds_count{operation="UpdateEntity"}`,
		`tablebridge_request_body_bytes_total{operation="EntityGroupTransaction"}`,
		`tablebridge_response_body_bytes_total{operation="QueryEntities"}`,
		`tablebridge_store_call_duration_seconds_count{method="Write",outcome="ok"}`,
		`tablebridge_store_call_duration_seconds_count{method="Write",outcome="failed"}`,
		`tablebridge_store_call_duration_seconds_count{method="QueryEntities",outcome="ok"}`,
		`tablebridge_group_commit_writes_count`,
	} {
		re := regexp.MustCompile(regexp.QuoteMeta(series) + ` (\S+)`)
		mm := re.FindStringSubmatch(text)
		if mm == nil {
			t.Errorf("/metrics has no %s", series)
			continue
		}
		if v, err := strconv.ParseFloat(mm[1], 64); err != nil || v <= 0 {
			t.Errorf("%s = %s, want > 0", series, mm[1])
		}
	}
}
