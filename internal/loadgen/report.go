package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a run.
type Report struct {
	// Mode is ModeAzureTable or ModeDirectDynamoDB.
	Mode          string        `json:"mode"`
	Endpoint      string        `json:"endpoint"`
	Account       string        `json:"account,omitempty"`
	Table         string        `json:"table"`
	Clients       int           `json:"clients"`
	Duration      time.Duration `json:"-"`
	OpsPerPhase   int64         `json:"ops_per_phase,omitempty"`
	EntityBytes   int           `json:"entity_bytes"`
	PartitionSize int           `json:"partition_size"`
	BatchSize     int           `json:"batch_size"`
	NumCPU        int           `json:"num_cpu"`
	GoMaxProcs    int           `json:"gomaxprocs"`
	Started       time.Time     `json:"started"`
	Seed          uint64        `json:"seed"`
	Phases        []PhaseResult `json:"phases"`
	// CleanupError is set when the table could not be deleted.
	CleanupError string `json:"cleanup_error,omitempty"`
}

// PhaseResult is one phase's measurement. An operation is one insert, one
// point read, one whole-partition scan (several pages) or one transaction.
type PhaseResult struct {
	Phase  Phase `json:"phase"`
	Ops    int64 `json:"ops"`    // successful operations
	Errors int64 `json:"errors"` // failed operations
	// Requests counts HTTP requests, successful or not; a scan makes one
	// per page.
	Requests int64 `json:"requests"`
	// Rows counts entities read (get, query) or written (insert, batch) by
	// the successful operations.
	Rows           int64   `json:"rows"`
	ElapsedSeconds float64 `json:"elapsed_s"`
	OpsPerSec      float64 `json:"ops_per_s"`
	RowsPerSec     float64 `json:"rows_per_s"`
	RequestsPerSec float64 `json:"requests_per_s"`
	// Latency of successful operations, in milliseconds.
	Latency LatencySummary `json:"latency_ms"`
	// ClientCPUSeconds is the CPU time the bench process itself used during
	// the phase: on a shared machine it is taken from the server.
	ClientCPUSeconds float64 `json:"client_cpu_s"`
	// SetupSeconds is the untimed seed loading before the phase.
	SetupSeconds float64 `json:"setup_s,omitempty"`
	// Stopped says why the phase ended before its bound, if it did.
	Stopped     string        `json:"stopped,omitempty"`
	FirstErrors []ErrorSample `json:"first_errors,omitempty"`
}

// LatencySummary holds latency figures in milliseconds.
type LatencySummary struct {
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// ErrorSample is one distinct failure and how often it happened.
type ErrorSample struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fill computes the rates and the latency summary.
func (p *PhaseResult) fill(elapsed time.Duration, h *Histogram) {
	p.ElapsedSeconds = elapsed.Seconds()
	if s := elapsed.Seconds(); s > 0 {
		p.OpsPerSec = float64(p.Ops) / s
		p.RowsPerSec = float64(p.Rows) / s
		p.RequestsPerSec = float64(p.Requests) / s
	}
	p.Latency = LatencySummary{
		Min:  ms(h.Min()),
		Mean: ms(h.Mean()),
		P50:  ms(h.Quantile(0.50)),
		P90:  ms(h.Quantile(0.90)),
		P99:  ms(h.Quantile(0.99)),
		Max:  ms(h.Max()),
	}
}

// Failed reports whether any operation failed or a phase stopped early.
func (r *Report) Failed() bool {
	for _, p := range r.Phases {
		if p.Errors > 0 || p.Stopped != "" {
			return true
		}
	}
	return r.CleanupError != ""
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	out := struct {
		*Report
		DurationSeconds float64 `json:"duration_per_phase_s,omitempty"`
		Note            string  `json:"note"`
	}{r, r.Duration.Seconds(), r.note()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// modeName describes the mode for the text report's header.
func (r *Report) modeName() string {
	switch r.Mode {
	case ModeDirectDynamoDB:
		return ModeDirectDynamoDB + " (aws-sdk-go-v2 straight to DynamoDB)"
	case "":
		return ModeAzureTable
	}
	return r.Mode
}

func (r *Report) note() string {
	return fmt.Sprintf("client and server share this machine's %d CPUs; client_cpu_s is the bench's own share", r.NumCPU)
}

// unitNames name what one operation and one row are in each phase.
var unitNames = map[Phase][2]string{
	PhaseInsert: {"inserts", "entities"},
	PhaseGet:    {"reads", "entities"},
	PhaseQuery:  {"scans", "rows"},
	PhaseBatch:  {"txns", "entities"},
}

// WriteText writes the report as a human-readable table followed by the
// first errors of each phase.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	limit := r.Duration.String() + " per phase"
	if r.OpsPerPhase > 0 {
		limit = fmt.Sprintf("%d ops per phase", r.OpsPerPhase)
		if r.Duration > 0 {
			limit += " (at most " + r.Duration.String() + ")"
		}
	}
	fmt.Fprintf(&b, "mode %s  endpoint %s  table %s  clients %d  %s\n", r.modeName(), r.Endpoint, r.Table, r.Clients, limit)
	shape := "JSON"
	if r.Mode == ModeDirectDynamoDB {
		shape = "as Azure JSON, stored as native DynamoDB attributes"
	}
	fmt.Fprintf(&b, "entity %d B %s, partitions of %d rows, batches of %d, seed %d\n",
		r.EntityBytes, shape, r.PartitionSize, r.BatchSize, r.Seed)
	fmt.Fprintf(&b, "note: %s.\n\n", r.note())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tops\tunit\tops/s\trows/s\treq/s\tp50 ms\tp99 ms\tmax ms\terrors\tclient cpu\t")
	for _, p := range r.Phases {
		units := unitNames[p.Phase]
		cores := 0.0
		if p.ElapsedSeconds > 0 {
			cores = p.ClientCPUSeconds / p.ElapsedSeconds
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.1f\t%.0f %s\t%.1f\t%.2f\t%.2f\t%.2f\t%d\t%.2f cores\t\n",
			p.Phase, p.Ops, units[0], p.OpsPerSec, p.RowsPerSec, units[1], p.RequestsPerSec,
			p.Latency.P50, p.Latency.P99, p.Latency.Max, p.Errors, cores)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range r.Phases {
		if p.SetupSeconds > 0 {
			fmt.Fprintf(&b, "%s: seed data loaded in %.1fs (not measured)\n", p.Phase, p.SetupSeconds)
		}
		if p.Stopped != "" {
			fmt.Fprintf(&b, "%s: STOPPED: %s\n", p.Phase, p.Stopped)
		}
		for _, e := range p.FirstErrors {
			fmt.Fprintf(&b, "%s: error x%d: %s\n", p.Phase, e.Count, e.Message)
		}
	}
	if r.CleanupError != "" {
		fmt.Fprintf(&b, "cleanup: could not delete table %s: %s\n", r.Table, r.CleanupError)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
