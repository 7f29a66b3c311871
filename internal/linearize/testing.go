package linearize

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/anishathalye/porcupine"
)

// The environment of a run of Test. make test sets none of them: each
// configuration runs a few short histories. make histories sets the first
// two for long runs.
const (
	// EnvHistories is how many histories each configuration records
	// (default: Config.Histories).
	EnvHistories = "TABLEBRIDGE_LINEARIZE_HISTORIES"
	// EnvOps is how many operations each client sends per history
	// (default: the configuration's, Config.Ops); a configuration that
	// sets fewer than the default keeps its proportion.
	EnvOps = "TABLEBRIDGE_LINEARIZE_OPS"
	// EnvSeed is the seed of the first history, to replay one a failure
	// printed (default: random, and logged).
	EnvSeed = "TABLEBRIDGE_LINEARIZE_SEED"
	// EnvOut is the directory a failing history is written to (default: a
	// new directory under the system's temporary directory, named in the
	// failure).
	EnvOut = "TABLEBRIDGE_LINEARIZE_OUT"
)

// CheckTimeout bounds Porcupine's search of one history.
const CheckTimeout = 2 * time.Minute

// Totals are the figures of a configuration's histories.
type Totals struct {
	Histories, Ops, Indeterminate, NotPerformed, Anomalies int
}

func (t *Totals) add(r Report) {
	t.Histories++
	t.Ops += r.Ops
	t.Indeterminate += r.Indeterminate
	t.NotPerformed += r.NotPerformed
	t.Anomalies += r.Anomalies()
}

func (t Totals) String() string {
	histories := "histories"
	if t.Histories == 1 {
		histories = "history"
	}
	return fmt.Sprintf("%d %s, %d operations checked (%d indeterminate, %d not performed), %d anomalies",
		t.Histories, histories, t.Ops, t.Indeterminate, t.NotPerformed, t.Anomalies)
}

// Test records histories of cfg against svcs (Run), checks each, and fails t on
// any anomaly, writing the whole history, the shortest failing one Shrink
// finds and its HTML view to EnvOut and printing the seed to replay. Each
// history has a table of its own; with cfg.Partitions unset, the seed
// chooses one partition (even) or three (odd). It logs the totals, in a
// line make histories collects ("linearize: <name>: ...").
func Test(t testing.TB, cfg Config, svcs ...*aztables.ServiceClient) Totals {
	t.Helper()
	if cfg.Histories <= 0 {
		cfg.Histories = 2
	}
	histories := envInt(t, EnvHistories, cfg.Histories)
	if n := envInt(t, EnvOps, 0); n > 0 {
		// A configuration that sets its own count (a heavy one) keeps
		// its proportion to the default.
		cfg.Ops = max(1, n*cmp.Or(cfg.Ops, defaultOps)/defaultOps)
	}
	seed := uint64(envInt(t, EnvSeed, int(rand.Uint32())))
	var totals Totals
	began := time.Now()
	for i := range uint64(histories) {
		hc := cfg
		if hc.Partitions == 0 {
			// By the seed, so that replaying one replays its keys.
			hc.Partitions = 1 + 2*int((seed+i)%2)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		h, err := Run(ctx, hc, seed+i, svcs...)
		cancel()
		if err != nil {
			t.Fatalf("linearize: %s: history of seed %d: %v", cfg.Name, seed+i, err)
		}
		r := Check(h, CheckTimeout)
		totals.add(r)
		if r.Anomalies() > 0 || r.Result != porcupine.Ok {
			fail(t, h, r)
		}
	}
	t.Logf("linearize: %s: %v in %v (seeds %d to %d)", cfg.Name, totals, time.Since(began).Round(time.Millisecond), seed, seed+uint64(histories)-1)
	return totals
}

// fail reports a history that failed its check, and keeps it.
func fail(t testing.TB, h *History, r Report) {
	t.Helper()
	var msg strings.Builder
	fmt.Fprintf(&msg, "linearize: %s: the history of seed %d (%d operations, %d indeterminate) ", h.Name, h.Seed, r.Ops, r.Indeterminate)
	switch r.Result {
	case porcupine.Illegal:
		msg.WriteString("is not linearizable: no order of its operations explains every answer")
	case porcupine.Unknown:
		fmt.Fprintf(&msg, "was not checked: the search ran past %v", CheckTimeout)
	default:
		msg.WriteString("is linearizable")
	}
	for _, p := range r.Problems {
		msg.WriteString("\n  " + p)
	}
	dir, err := outDir()
	if err != nil {
		t.Errorf("%s\n(not kept: %v)", msg.String(), err)
		return
	}
	base := filepath.Join(dir, fmt.Sprintf("%s-seed%d", h.Name, h.Seed))
	if err := h.Save(base + ".json"); err == nil {
		fmt.Fprintf(&msg, "\nthe whole history: %s.json", base)
	}
	if r.Result == porcupine.Illegal {
		short := Shrink(h, time.Minute)
		if err := short.Save(base + "-short.json"); err == nil {
			fmt.Fprintf(&msg, "\nthe shortest failing history found (%d operations): %s-short.json", len(short.Ops), base)
		}
		if err := Visualize(short, base+"-short.html"); err == nil {
			fmt.Fprintf(&msg, "\nits Porcupine view: %s-short.html", base)
		}
		for _, op := range short.Ops {
			msg.WriteString("\n  " + op.String())
		}
	}
	fmt.Fprintf(&msg, "\nreplay the workload with %s=%d (and %s=1)", EnvSeed, h.Seed, EnvHistories)
	t.Error(msg.String())
}

func outDir() (string, error) {
	if dir := os.Getenv(EnvOut); dir != "" {
		return dir, os.MkdirAll(dir, 0o755)
	}
	return os.MkdirTemp("", "linearize-")
}

func envInt(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a number", name, v)
	}
	return n
}
