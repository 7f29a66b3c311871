package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/azurite"
	"github.com/tablebridge/tablebridge/internal/loadgen"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// BenchmarkInMemoryVsNoop puts the local server's stores side by side in
// one run, at 16 clients: an HTTP server that does no work (the ceiling of
// any server on this machine with this client), serve -store memory, the
// durable stores (pebble, serve's default, and bolt), and Azurite with
// --inMemoryPersistence. Each target runs tablebridge bench's insert,
// point read and whole-partition query phases over a seed of 10,000
// entities (the no-op server answers no query), the targets alternating
// round by round; every round is logged and the best of each reported,
// with the shares of the ceiling and of the memory store that the goals
// are stated in. The servers run in this process with the client, as the
// no-op server must for a fair ceiling; Azurite runs in its own Node.js
// process. It also reports the process's CPU time per operation (client
// and server together, so not for Azurite): on a machine whose cores the
// run fills, that share is what the rates come to, and unlike the rates it
// holds when other work shares the machine.
//
//	go test -run '^$' -bench InMemoryVsNoop -benchtime 1x ./cmd/tablebridge
//
// TABLEBRIDGE_BENCH_PHASE sets the length of each phase (default 5s),
// TABLEBRIDGE_BENCH_ROUNDS how often the targets alternate (default 3), and
// TABLEBRIDGE_BENCH_TARGETS which of them run (default all).
func BenchmarkInMemoryVsNoop(b *testing.B) {
	phase := 5 * time.Second
	if v := os.Getenv("TABLEBRIDGE_BENCH_PHASE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		phase = d
	}
	rounds := 3
	if v := os.Getenv("TABLEBRIDGE_BENCH_ROUNDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			b.Fatalf("TABLEBRIDGE_BENCH_ROUNDS=%q", v)
		}
		rounds = n
	}
	noop := httptest.NewServer(noopTables{})
	defer noop.Close()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	endpoint := func(storeKind string) string {
		connStr, _ := startServeConfig(b, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: b.TempDir(), storeKind: storeKind,
			accounts: auth.AccountList{auth.DevStoreAccount()}})
		_, after, _ := strings.Cut(connStr, "TableEndpoint=")
		return strings.TrimSuffix(after, ";")
	}
	type target struct {
		name     string
		endpoint func() string
	}
	targets := []target{
		{"noop", func() string { return noop.URL + "/" + auth.DevStoreAccountName }},
		{"memory", func() string { return endpoint("memory") }},
		{"pebble", func() string { return endpoint(enginePebble) }},
		{"bolt", func() string { return endpoint(engineBolt) }},
		{"azurite", func() string { return azurite.Endpoint(b) }},
	}
	if only := os.Getenv("TABLEBRIDGE_BENCH_TARGETS"); only != "" {
		// For a CPU profile of one target: go test -cpuprofile with
		// TABLEBRIDGE_BENCH_TARGETS=memory.
		targets = slices.DeleteFunc(targets, func(tg target) bool { return !slices.Contains(strings.Split(only, ","), tg.name) })
	}
	endpoints := map[string]string{}
	for _, tg := range targets {
		endpoints[tg.name] = tg.endpoint()
	}
	// best holds each target's best rate per phase: operations per second
	// for inserts and point reads, rows per second for queries.
	best := map[string]map[loadgen.Phase]float64{}
	leastCPU := map[string]map[loadgen.Phase]float64{} // µs per operation
	for range b.N {
		for round := range rounds {
			for _, tg := range targets {
				cfg := loadgen.DefaultConfig()
				cfg.Endpoint, cfg.Duration = endpoints[tg.name], phase
				cfg.QueryPartitions = 10 // 10,000 entities to read
				cfg.Phases = []loadgen.Phase{loadgen.PhaseInsert, loadgen.PhaseGet, loadgen.PhaseQuery}
				if tg.name == "noop" {
					cfg.Phases = cfg.Phases[:2]
				}
				report, err := loadgen.Run(ctx, cfg, io.Discard)
				if err != nil {
					b.Fatalf("%s: %v", tg.name, err)
				}
				if report.Failed() {
					b.Fatalf("%s: operations failed: %+v", tg.name, report.Phases)
				}
				if best[tg.name] == nil {
					best[tg.name], leastCPU[tg.name] = map[loadgen.Phase]float64{}, map[loadgen.Phase]float64{}
				}
				for _, p := range report.Phases {
					rate := p.OpsPerSec
					if p.Phase == loadgen.PhaseQuery {
						rate = p.RowsPerSec
					}
					cpu := 1e6 * p.ClientCPUSeconds / float64(p.Ops)
					b.Logf("round %d %-8s %-6s %9.0f %s p50 %.2f ms, %.1f µs CPU/op", round+1, tg.name, p.Phase, rate, rateUnit(p.Phase), p.Latency.P50, cpu)
					best[tg.name][p.Phase] = max(best[tg.name][p.Phase], rate)
					if least, ok := leastCPU[tg.name][p.Phase]; !ok || cpu < least {
						leastCPU[tg.name][p.Phase] = cpu
					}
				}
			}
		}
	}
	for _, tg := range targets {
		b.ReportMetric(best[tg.name][loadgen.PhaseInsert], tg.name+"-inserts/s")
		b.ReportMetric(best[tg.name][loadgen.PhaseGet], tg.name+"-gets/s")
		if tg.name != "noop" {
			b.ReportMetric(best[tg.name][loadgen.PhaseQuery], tg.name+"-scan-rows/s")
		}
		if tg.name != "azurite" { // its CPU is another process's
			b.ReportMetric(leastCPU[tg.name][loadgen.PhaseInsert], tg.name+"-insert-cpu-µs/op")
			b.ReportMetric(leastCPU[tg.name][loadgen.PhaseGet], tg.name+"-get-cpu-µs/op")
		}
	}
	share := func(name, of string, p loadgen.Phase) {
		if best[name] != nil && best[of] != nil && best[of][p] > 0 {
			b.ReportMetric(100*best[name][p]/best[of][p], fmt.Sprintf("%s-%s-%%%s", name, rateName(p), of))
		}
	}
	for _, p := range []loadgen.Phase{loadgen.PhaseInsert, loadgen.PhaseGet} {
		share("memory", "noop", p)
		share("pebble", "noop", p)
	}
	for _, p := range []loadgen.Phase{loadgen.PhaseInsert, loadgen.PhaseGet, loadgen.PhaseQuery} {
		share("pebble", "memory", p)
		share("pebble", "azurite", p)
	}
	if leastCPU["noop"] != nil && leastCPU["memory"] != nil {
		b.ReportMetric(100*leastCPU["noop"][loadgen.PhaseInsert]/leastCPU["memory"][loadgen.PhaseInsert], "memory-inserts-%noop-by-cpu")
		b.ReportMetric(100*leastCPU["noop"][loadgen.PhaseGet]/leastCPU["memory"][loadgen.PhaseGet], "memory-gets-%noop-by-cpu")
	}
}

// rateName and rateUnit name a phase's rate as the benchmark reports it.
func rateName(p loadgen.Phase) string {
	switch p {
	case loadgen.PhaseInsert:
		return "inserts"
	case loadgen.PhaseGet:
		return "gets"
	}
	return "scan-rows"
}

func rateUnit(p loadgen.Phase) string {
	if p == loadgen.PhaseQuery {
		return "rows/s"
	}
	return "ops/s"
}

// noopTables answers the bench's requests as the Table service would, with
// no work behind the answers: Create and Delete Table, an insert answered
// 201 with its own body (as Azure echoes the entity), and a point read
// answered with one fixed entity of the bench's size. Its answers carry the
// headers the service's do (an answer's ETag, an insert's Location and
// DataServiceId, Cache-Control and X-Content-Type-Options on every answer),
// with fixed values of their usual length, since parsing them is part of
// every client's cost for any Table server.
type noopTables struct{}

const (
	noopEntityHead = `{"odata.metadata":"http://127.0.0.1/devstoreaccount1/$metadata#t/@Element","odata.etag":"W/\"datetime'2026-11-26T00%3A00%3A00.0000000Z'\"",`
	noopETag       = `W/"datetime'2026-11-26T00%3A00%3A00.0000000Z'"`
	noopLocation   = "http://127.0.0.1:10002/devstoreaccount1/bench(PartitionKey='i0003-000012',RowKey='0000000042')"
	noopEntityTail = `,"Timestamp":"2026-11-26T00:00:00.0000000Z","S":"` + "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + `"}`
)

func (noopTables) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h := w.Header()
	h.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	h.Set("x-ms-request-id", "00000000-0000-0000-0000-000000000000")
	h.Set("x-ms-version", "2019-02-02")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	switch {
	case r.Method == http.MethodPost:
		h.Set("ETag", noopETag)
		h.Set("Location", noopLocation)
		h.Set("DataServiceId", noopLocation)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write(body)
	case r.Method == http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
	default:
		h.Set("ETag", noopETag)
		// The bench checks that the answer holds the keys it asked for:
		// echo them from ...(PartitionKey='p',RowKey='r').
		_, keys, _ := strings.Cut(r.URL.Path, "(PartitionKey='")
		pk, rest, _ := strings.Cut(keys, "',RowKey='")
		rk, _, _ := strings.Cut(rest, "')")
		buf := make([]byte, 0, 512)
		buf = append(buf, noopEntityHead...)
		buf = append(buf, `"PartitionKey":"`...)
		buf = append(buf, pk...)
		buf = append(buf, `","RowKey":"`...)
		buf = append(buf, rk...)
		buf = append(buf, '"')
		buf = append(buf, noopEntityTail...)
		_, _ = w.Write(buf)
	}
}
