package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// smallConfig is a run of a few operations per phase, bounded by counts
// only, so no assertion depends on timing.
func smallConfig(endpoint string) Config {
	cfg := DefaultConfig()
	cfg.Endpoint = endpoint
	cfg.Clients = 4
	cfg.Duration = 0
	cfg.Ops = 12
	cfg.PartitionSize = 25
	cfg.QueryPartitions = 3
	cfg.BatchSize = 10
	cfg.Seed = 1
	return cfg
}

func phaseByName(t *testing.T, r *Report, p Phase) PhaseResult {
	t.Helper()
	for _, res := range r.Phases {
		if res.Phase == p {
			return res
		}
	}
	t.Fatalf("no %s phase in the report", p)
	return PhaseResult{}
}

// phaseCounts is what one phase of a run bounded by op count reports.
type phaseCounts struct {
	phase          Phase
	rows, requests int64
}

// wantPhases checks that report holds exactly the phases of want, in
// order, each with ops operations, no errors, the rows and requests of
// want and latency figures in order.
func wantPhases(t *testing.T, report *Report, ops int64, want []phaseCounts) {
	t.Helper()
	if len(report.Phases) != len(want) {
		t.Fatalf("%d phases, want %d: %+v", len(report.Phases), len(want), report.Phases)
	}
	for i, w := range want {
		t.Run(string(w.phase), func(t *testing.T) {
			got := report.Phases[i]
			if got.Phase != w.phase || got.Ops != ops || got.Errors != 0 || got.Rows != w.rows || got.Requests != w.requests {
				t.Fatalf("got %s ops %d errors %d rows %d requests %d; want %s ops %d rows %d requests %d",
					got.Phase, got.Ops, got.Errors, got.Rows, got.Requests, w.phase, ops, w.rows, w.requests)
			}
			if got.Latency.P50 <= 0 || got.Latency.P99 < got.Latency.P50 || got.Latency.Max < got.Latency.P99 {
				t.Errorf("latency figures out of order: %+v", got.Latency)
			}
			if got.Stopped != "" || len(got.FirstErrors) != 0 {
				t.Errorf("stopped %q, errors %v", got.Stopped, got.FirstErrors)
			}
		})
	}
}

func TestRunAllPhases(t *testing.T) {
	t.Parallel()
	fake, endpoint := newFakeTables(t)
	fake.pageSize = 7 // 25 rows: pages of 7, 7, 7, 4
	cfg := smallConfig(endpoint)
	var progress bytes.Buffer
	report, err := Run(context.Background(), cfg, &progress)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	if report.Failed() {
		t.Fatalf("run failed: %+v", report.Phases)
	}
	wantPhases(t, report, 12, []phaseCounts{
		{PhaseInsert, 12, 12},
		{PhaseGet, 12, 12},
		{PhaseQuery, 12 * 25, 12 * 4},
		{PhaseBatch, 12 * 10, 12},
	})
	t.Run("data and cleanup", func(t *testing.T) {
		if n := fake.tableCount(); n != 0 {
			t.Errorf("%d tables left behind", n)
		}
		// The get phase read the inserted entities, not the seed data,
		// which only the query phase needed (3 partitions of 25 in
		// batches of 10: 9 batches, then 12 measured ones).
		if got := fake.count("batch"); got != 9+12 {
			t.Errorf("%d batch requests, want 21", got)
		}
		if got := fake.count("get"); got != 12 {
			t.Errorf("%d get requests, want 12", got)
		}
	})
}

func TestRunKeepsTableAndData(t *testing.T) {
	t.Parallel()
	fake, endpoint := newFakeTables(t)
	cfg := smallConfig(endpoint)
	cfg.KeepTable = true
	cfg.Phases = []Phase{PhaseGet, PhaseBatch}
	report, err := Run(context.Background(), cfg, nil)
	if err != nil || report.Failed() {
		t.Fatalf("Run: %v %+v", err, report)
	}
	if fake.tableCount() != 1 {
		t.Fatal("the table was deleted despite KeepTable")
	}
	// Without an insert phase, get reads the seed data set.
	if got := fake.rowsWithPrefix("q-"); got != 3*25 {
		t.Errorf("%d seed rows, want 75", got)
	}
	if got := fake.rowsWithPrefix("b"); got != 12*10 {
		t.Errorf("%d batch rows, want 120", got)
	}
	if got := phaseByName(t, report, PhaseGet); got.SetupSeconds <= 0 || got.Ops != 12 {
		t.Errorf("get phase %+v: want 12 reads after a seed load", got)
	}
}

func TestRunReportsFailures(t *testing.T) {
	t.Parallel()
	always := func(int) bool { return true }
	nth := func(k int) func(int) bool { return func(n int) bool { return n == k } }
	cases := []struct {
		name  string
		phase Phase
		// The fake answers the requests of op whose 1-based count
		// satisfies when: with an Azure error if code is set, otherwise
		// with status (200 when 0) and body.
		op        string
		when      func(n int) bool
		status    int
		code      string
		body      []byte
		pageSize  int
		wantOps   int64
		wantErrs  int64
		wantError string
		stopped   string
	}{
		{
			name: "every third insert conflicts", phase: PhaseInsert,
			op: "insert", when: func(n int) bool { return n%3 == 0 }, status: http.StatusConflict, code: "EntityAlreadyExists",
			wantOps: 8, wantErrs: 4,
			wantError: "insert: HTTP 409 EntityAlreadyExists: fake EntityAlreadyExists",
		},
		{
			name: "server busy on reads", phase: PhaseGet,
			op: "get", when: func(n int) bool { return n <= 5 }, status: http.StatusServiceUnavailable, code: "ServerBusy",
			wantOps: 7, wantErrs: 5,
			wantError: "get: HTTP 503 ServerBusy",
		},
		{
			name: "a read returns the wrong entity", phase: PhaseGet,
			op: "get", when: nth(1), body: []byte(`{"PartitionKey":"x","RowKey":"elsewhere"}`),
			wantOps: 11, wantErrs: 1,
			wantError: "get: response does not hold RowKey",
		},
		{
			name: "a query page loses its rows", phase: PhaseQuery,
			op: "query", when: nth(2), body: []byte(`{"value":[]}`),
			pageSize: 10,
			wantOps:  11, wantErrs: 1,
			wantError: "want 25",
		},
		{
			name: "a query answers garbage", phase: PhaseQuery,
			op: "query", when: nth(1), body: []byte(`{"value":[{"a":`),
			wantOps: 11, wantErrs: 1,
			wantError: "query: query response: truncated JSON",
		},
		{
			name: "a batch operation fails inside a 202", phase: PhaseBatch,
			op: "batch", when: nth(4), status: http.StatusAccepted, body: batchResponse(failPart),
			wantOps: 11, wantErrs: 1,
			wantError: "batch operation failed: HTTP/1.1 409 Conflict EntityAlreadyExists",
		},
		{
			name: "nothing works: the phase stops early", phase: PhaseInsert,
			op: "insert", when: always, status: http.StatusInternalServerError, code: "InternalError",
			wantOps: 0, wantErrs: -1,
			wantError: "insert: HTTP 500 InternalError",
			stopped:   "aborted",
		},
		{
			name: "seed data cannot be loaded", phase: PhaseQuery,
			op: "batch", when: always, status: http.StatusRequestEntityTooLarge, code: "RequestBodyTooLarge",
			wantOps: 0, wantErrs: 0,
			stopped: "seed data could not be loaded: batch: HTTP 413 RequestBodyTooLarge",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake, endpoint := newFakeTables(t)
			if c.pageSize > 0 {
				fake.pageSize = c.pageSize
			}
			fake.fault = func(op string, n int, w http.ResponseWriter) bool {
				switch {
				case op != c.op || !c.when(n):
					return false
				case c.code != "":
					fakeError(w, c.status, c.code)
				default:
					if c.status != 0 {
						w.WriteHeader(c.status)
					}
					w.Write(c.body)
				}
				return true
			}
			cfg := smallConfig(endpoint)
			cfg.Phases = []Phase{c.phase}
			if c.stopped == "aborted" {
				cfg.Ops = 10 * abortAfterErrors
			}
			report, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			got := report.Phases[0]
			if !report.Failed() {
				t.Error("report does not say it failed")
			}
			if got.Ops != c.wantOps {
				t.Errorf("ops %d, want %d", got.Ops, c.wantOps)
			}
			if c.wantErrs >= 0 && got.Errors != c.wantErrs {
				t.Errorf("errors %d, want %d", got.Errors, c.wantErrs)
			}
			if c.stopped == "aborted" && (got.Errors < abortAfterErrors || got.Errors >= cfg.Ops) {
				t.Errorf("errors %d: the phase should stop soon after %d", got.Errors, abortAfterErrors)
			}
			if !strings.Contains(got.Stopped, c.stopped) || (c.stopped == "") != (got.Stopped == "") {
				t.Errorf("stopped %q, want %q", got.Stopped, c.stopped)
			}
			if c.wantError != "" {
				if len(got.FirstErrors) == 0 || !strings.Contains(got.FirstErrors[0].Message, c.wantError) {
					t.Fatalf("first errors %+v, want one containing %q", got.FirstErrors, c.wantError)
				}
				if strings.Contains(got.FirstErrors[0].Message, "RequestId") {
					t.Errorf("error %q keeps the per-request tail, so equal errors would not group", got.FirstErrors[0].Message)
				}
				var total int64
				for _, e := range got.FirstErrors {
					total += e.Count
				}
				if total != got.Errors {
					t.Errorf("error samples count %d, phase %d", total, got.Errors)
				}
			}
		})
	}
}

func TestRunSetupFailures(t *testing.T) {
	t.Parallel()
	t.Run("wrong key", func(t *testing.T) {
		_, endpoint := newFakeTables(t)
		cfg := smallConfig(endpoint)
		cfg.Key = "d3Jvbmcga2V5"
		report, err := Run(context.Background(), cfg, nil)
		if err == nil || !strings.Contains(err.Error(), "HTTP 403 AuthenticationFailed") || report != nil {
			t.Fatalf("Run = %v, %v; want a 403 AuthenticationFailed error", report, err)
		}
	})
	t.Run("nothing listening", func(t *testing.T) {
		cfg := smallConfig("http://127.0.0.1:1/devstoreaccount1")
		if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "create table") {
			t.Fatalf("Run error %v, want a create table failure", err)
		}
	})
	t.Run("invalid config", func(t *testing.T) {
		cfg := smallConfig("http://192.0.2.1/devstoreaccount1")
		if _, err := Run(context.Background(), cfg, nil); !errors.Is(err, ErrRemoteEndpoint) {
			t.Fatalf("Run error %v, want ErrRemoteEndpoint", err)
		}
	})
}

func TestRunInterrupted(t *testing.T) {
	t.Parallel()
	fake, endpoint := newFakeTables(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	fake.onRequest = func(op string, n int) {
		if op == "insert" && n == 5 {
			once.Do(cancel)
		}
	}
	cfg := smallConfig(endpoint)
	cfg.Ops = 1000
	report, err := Run(ctx, cfg, nil)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("Run error %v, want ErrInterrupted", err)
	}
	if len(report.Phases) != 1 || report.Phases[0].Stopped != "interrupted" {
		t.Fatalf("phases %+v, want one interrupted insert phase", report.Phases)
	}
	if report.Phases[0].Errors != 0 {
		t.Errorf("the interrupt was counted as %d server errors", report.Phases[0].Errors)
	}
	if fake.tableCount() != 0 {
		t.Error("the table was not cleaned up after the interrupt")
	}
}

func TestReportWriters(t *testing.T) {
	t.Parallel()
	_, endpoint := newFakeTables(t)
	cfg := smallConfig(endpoint)
	cfg.Phases = []Phase{PhaseInsert, PhaseQuery}
	report, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	report.Phases[0].FirstErrors = []ErrorSample{{Message: "insert: HTTP 500 InternalError", Count: 3}}
	report.Phases[0].Errors = 3
	t.Run("text", func(t *testing.T) {
		var b bytes.Buffer
		if err := report.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"inserts", "scans", "rows", "p99 ms", "client cpu", "seed data loaded",
			"insert: error x3: insert: HTTP 500 InternalError", "share this machine"} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("text report lacks %q:\n%s", want, b.String())
			}
		}
	})
	t.Run("json", func(t *testing.T) {
		var b bytes.Buffer
		if err := report.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		var decoded struct {
			Table  string
			Note   string
			Phases []struct {
				Phase     string
				Ops       int64
				RowsPerS  float64                    `json:"rows_per_s"`
				LatencyMs struct{ P50, P99 float64 } `json:"latency_ms"`
				Errors    []ErrorSample              `json:"first_errors"`
			}
		}
		if err := json.Unmarshal(b.Bytes(), &decoded); err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
		if decoded.Table != report.Table || decoded.Note == "" || len(decoded.Phases) != 2 ||
			decoded.Phases[1].Phase != "query" || decoded.Phases[1].RowsPerS <= 0 || decoded.Phases[1].LatencyMs.P99 <= 0 ||
			len(decoded.Phases[0].Errors) != 1 {
			t.Fatalf("JSON report %+v from\n%s", decoded, b.String())
		}
	})
}
