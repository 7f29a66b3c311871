package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// serveUntil runs serve and returns what it printed up to and including
// the first line for which last is true.
func serveUntil(t *testing.T, ctx context.Context, cfg serveConfig, last func(line string) bool) ([]string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, cfg, pw)
		pw.CloseWithError(errors.New("serve returned"))
		done <- err
	}()
	var lines []string
	sc := bufio.NewScanner(pr)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if last(sc.Text()) {
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			return lines, done
		}
	}
	t.Fatalf("serve stopped printing before the line awaited: %v (serve: %v)\n%q", sc.Err(), <-done, lines)
	return nil, nil
}

// find returns the first submatch of re in lines.
func find(t *testing.T, lines []string, re string) string {
	t.Helper()
	r := regexp.MustCompile(re)
	for _, l := range lines {
		if m := r.FindStringSubmatch(l); m != nil {
			return m[1]
		}
	}
	t.Fatalf("serve printed no line matching %s: %q", re, lines)
	return ""
}

// TestServeMetrics drives serve with -metrics through the Go SDK, then
// scrapes /metrics: requests by operation, status and account, latency,
// bytes, store calls, group commits and a refusal by -max-body-bytes.
func TestServeMetrics(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(t.Context())
	lines, done := serveUntil(t, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: t.TempDir(), storeKind: "bolt",
		accounts: auth.AccountList{auth.DevStoreAccount()}, metrics: metricsFlags{addr: "127.0.0.1:0"},
		limits: serveLimits{maxBodyBytes: 1000}}, func(line string) bool { return strings.Contains(line, "DefaultEndpointsProtocol=") })
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	metricsURL := find(t, lines, `^metrics on (http://\S+/metrics)$`)
	connStr := find(t, lines, `(DefaultEndpointsProtocol=\S+)`)

	svc, err := aztables.NewServiceClientFromConnectionString(connStr, &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "metered", nil); err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient("metered")
	entity := []byte(`{"PartitionKey":"p","RowKey":"r","Size":1}`)
	if _, err := client.AddEntity(ctx, entity, nil); err != nil {
		t.Fatal(err)
	}
	var re *azcore.ResponseError
	if _, err := client.AddEntity(ctx, entity, nil); !errors.As(err, &re) || re.StatusCode != http.StatusConflict {
		t.Fatalf("second insert: %v, want 409", err)
	}
	if _, err := client.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	large := []byte(`{"PartitionKey":"p","RowKey":"big","Text":"` + strings.Repeat("x", 2000) + `"}`)
	if _, err := client.AddEntity(ctx, large, nil); !errors.As(err, &re) || re.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("insert past -max-body-bytes: %v, want 503", err)
	}

	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	text := string(body)
	for _, want := range []string{
		`tablebridge_requests_total{account="devstoreaccount1",operation="CreateTable",status="201"} 1`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="InsertEntity",status="201"} 1`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="InsertEntity",status="409"} 1`,
		`tablebridge_requests_total{account="devstoreaccount1",operation="GetEntity",status="200"} 1`,
		`tablebridge_requests_total{account="",operation="none",status="503"} 1`,
		`tablebridge_refused_requests_total{bound="request"} 1`,
		`tablebridge_request_duration_seconds_count{operation="InsertEntity"} 2`,
		`tablebridge_store_call_duration_seconds_count{method="Write",outcome="ok"} 1`,
		`tablebridge_store_call_duration_seconds_count{method="Write",outcome="failed"} 1`,
		`tablebridge_store_call_duration_seconds_count{method="GetEntity",outcome="ok"} 1`,
		`tablebridge_group_commit_writes_count `,
		`tablebridge_request_body_bytes_total{operation="InsertEntity"} ` + strconv.Itoa(2*len(entity)),
		`tablebridge_response_body_bytes_total{operation="GetEntity"} `,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", text)
	}
}

// TestServeMetricsAddressInUse: a -metrics address that cannot be bound
// stops serve before it serves anything, naming the flag.
func TestServeMetricsAddressInUse(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	err = serve(t.Context(), serveConfig{listen: "127.0.0.1:0", dataDir: t.TempDir(), storeKind: "bolt",
		accounts: auth.AccountList{auth.DevStoreAccount()}, metrics: metricsFlags{addr: taken.Addr().String()}}, io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "metrics: ") {
		t.Errorf("serve with -metrics on a port in use: %v", err)
	}
}
