package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Early abort: a phase whose first abortAfterErrors operations all fail stops
// there, since the endpoint is clearly not serving it; the errors are still
// counted and reported.
const abortAfterErrors = 50

// maxDistinctErrors bounds the error log's memory; further distinct
// messages are counted under one "other" line.
const (
	maxDistinctErrors = 64
	reportedErrors    = 5
)

// ErrInterrupted is returned when the context ends a run early; the report
// holds what was measured up to then.
var ErrInterrupted = errors.New("benchmark interrupted")

// run is one benchmark: the table, the shared HTTP client and the data the
// phases leave for each other.
type run struct {
	cfg      Config
	base     string // endpoint URL without trailing slash
	account  string
	key      []byte
	table    string
	client   *http.Client
	target   target
	mode     string
	template *entityTemplate
	batch    *batchBuilder
	progress io.Writer
	seed     uint64

	// tableURL is base + "/" + table; batchURL is base + "/$batch".
	tableURL, batchURL string

	// inserted lists the keys the insert phase wrote, for the get phase.
	inserted []insertedKey
	// seeded tells whether the seed data set is loaded.
	seeded bool
}

type insertedKey struct {
	worker int32
	index  int64
}

// Run executes the benchmark described by cfg against its endpoint and
// returns the report. Progress lines go to progress (nil discards them).
// Failures of individual operations are counted in the report, not
// returned; the error is for a run that could not start or finish, and for
// ErrInterrupted when ctx ends it (with the partial report).
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Report, error) {
	r, err := newRun(cfg, progress)
	if err != nil {
		return nil, err
	}
	defer r.client.CloseIdleConnections()
	table, base, template := r.table, r.base, r.template
	report := &Report{
		Mode:          r.mode,
		Endpoint:      base,
		Account:       cfg.Account,
		Table:         table,
		Clients:       cfg.Clients,
		Duration:      cfg.Duration,
		OpsPerPhase:   cfg.Ops,
		EntityBytes:   template.size,
		PartitionSize: cfg.PartitionSize,
		BatchSize:     cfg.BatchSize,
		NumCPU:        runtime.NumCPU(),
		GoMaxProcs:    runtime.GOMAXPROCS(0),
		Started:       time.Now().UTC(),
		Seed:          r.seed,
	}
	fmt.Fprintf(r.progress, "bench: creating table %s at %s\n", table, base)
	if r.mode == ModeDirectDynamoDB {
		report.Account = ""
	}
	w := r.newWorker(-1)
	if err := r.target.createTable(ctx, w); err != nil {
		var se *statusError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%w (table %s)", err, table) // already says "create table"
		}
		return nil, fmt.Errorf("create table %s: %w", table, err)
	}
	runErr := r.runPhases(ctx, report)
	if cfg.KeepTable {
		fmt.Fprintf(r.progress, "bench: keeping table %s\n", table)
	} else {
		// Clean up even after an interrupt, on a context of its own.
		cleanupCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.RequestTimeout)
		if err := r.target.deleteTable(cleanupCtx, w); err != nil {
			report.CleanupError = err.Error()
		}
		cancel()
	}
	return report, runErr
}

// newRun validates cfg and prepares everything a run shares: the client,
// the table name and the precomputed entity and batch templates.
func newRun(cfg Config, progress io.Writer) (*run, error) {
	if progress == nil {
		progress = io.Discard
	}
	endpoint, key, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	seed := uint64(cfg.Seed)
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6f616467656e))
	template, err := newEntityTemplate(cfg.EntitySize, rng)
	if err != nil {
		return nil, err
	}
	table := fmt.Sprintf("%s%08x", cfg.TablePrefix, rng.Uint32())
	base := endpoint.String()
	r := &run{
		cfg:     cfg,
		base:    base,
		account: cfg.Account,
		key:     key,
		table:   table,
		client: &http.Client{
			Transport: newTransport(cfg.Clients, cfg.AllowRemote),
			Timeout:   cfg.RequestTimeout,
			// Neither Azure nor DynamoDB redirects; following one could
			// leave loopback.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		target:   tableTarget{},
		mode:     ModeAzureTable,
		template: template,
		batch:    newBatchBuilder(endpoint, table),
		progress: progress,
		seed:     seed,
		tableURL: base + "/" + table,
		batchURL: base + "/$batch",
	}
	if cfg.DynamoDBEndpoint != "" {
		r.target = newDynamoTarget(base, table, r.client, &template.values)
		r.mode = ModeDirectDynamoDB
	}
	return r, nil
}

func (r *run) runPhases(ctx context.Context, report *Report) error {
	for _, phase := range r.cfg.Phases {
		if ctx.Err() != nil {
			return ErrInterrupted
		}
		result := r.runPhase(ctx, phase)
		report.Phases = append(report.Phases, result)
		if ctx.Err() != nil {
			return ErrInterrupted
		}
	}
	return nil
}

// runPhase prepares the phase's data if it needs any, then measures it.
func (r *run) runPhase(ctx context.Context, phase Phase) PhaseResult {
	var setup time.Duration
	var setupErr error
	var op opFunc
	switch phase {
	case PhaseInsert:
		op = (*worker).insertOne
	case PhaseGet:
		if len(r.inserted) == 0 {
			setup, setupErr = r.ensureSeed(ctx)
		}
		op = (*worker).getOne
	case PhaseQuery:
		setup, setupErr = r.ensureSeed(ctx)
		op = (*worker).scanPartition
	case PhaseBatch:
		op = (*worker).batchOne
	}
	if setupErr != nil {
		return PhaseResult{Phase: phase, Stopped: "seed data could not be loaded: " + setupErr.Error(), SetupSeconds: setup.Seconds()}
	}
	limit := r.cfg.Duration.String()
	if r.cfg.Ops > 0 {
		limit = fmt.Sprintf("%d ops", r.cfg.Ops)
		if r.cfg.Duration > 0 {
			limit += fmt.Sprintf(" or %s", r.cfg.Duration)
		}
	}
	fmt.Fprintf(r.progress, "bench: %s: %d clients, %s\n", phase, r.cfg.Clients, limit)
	workers := r.workers()
	result := r.measure(ctx, phase, op, workers)
	result.SetupSeconds = setup.Seconds()
	if phase == PhaseInsert {
		r.collectInserted(workers)
	}
	return result
}

// opFunc performs one measured operation and returns the rows it moved
// (entities read or written).
type opFunc func(w *worker, ctx context.Context) (rows int64, err error)

// phaseState is what a phase's workers share.
type phaseState struct {
	deadline  time.Time // zero: no time bound
	claimed   atomic.Int64
	successes atomic.Int64
	failures  atomic.Int64
	stop      atomic.Bool
	errs      errorLog
}

// claim reports whether the worker may start another operation.
func (s *phaseState) claim(ops int64) bool {
	if s.stop.Load() {
		return false
	}
	if !s.deadline.IsZero() && !time.Now().Before(s.deadline) {
		return false
	}
	return ops == 0 || s.claimed.Add(1) <= ops
}

// measure runs op on every worker until the phase's bound and gathers the
// workers' histograms and counters.
func (r *run) measure(ctx context.Context, phase Phase, op opFunc, workers []*worker) PhaseResult {
	state := &phaseState{}
	cpuBefore, cpuOK := processCPU()
	start := time.Now()
	if r.cfg.Duration > 0 {
		state.deadline = start.Add(r.cfg.Duration)
	}
	var wg sync.WaitGroup
	for _, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for state.claim(r.cfg.Ops) {
				opStart := time.Now()
				rows, err := op(w, ctx)
				elapsed := time.Since(opStart)
				if err != nil {
					if ctx.Err() != nil {
						// The run was interrupted: not a server failure.
						return
					}
					w.failures++
					state.errs.add(err)
					if state.failures.Add(1) >= abortAfterErrors && state.successes.Load() == 0 {
						state.stop.Store(true)
					}
					continue
				}
				w.hist.Record(elapsed)
				w.ops++
				w.rows += rows
				state.successes.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	result := PhaseResult{Phase: phase}
	hist := NewHistogram()
	for _, w := range workers {
		hist.Merge(w.hist)
		result.Ops += w.ops
		result.Errors += w.failures
		result.Requests += w.requests
		result.Rows += w.rows
	}
	result.fill(elapsed, hist)
	if cpuOK {
		if cpuAfter, ok := processCPU(); ok {
			result.ClientCPUSeconds = (cpuAfter - cpuBefore).Seconds()
		}
	}
	result.FirstErrors = state.errs.samples(reportedErrors)
	switch {
	case ctx.Err() != nil:
		result.Stopped = "interrupted"
	case state.stop.Load():
		result.Stopped = fmt.Sprintf("aborted: the first %d operations all failed", state.failures.Load())
	}
	return result
}

// workers returns one fresh worker per client. A worker's id is part of
// every key it writes, and each phase appears once in a run, so keys never
// collide.
func (r *run) workers() []*worker {
	ws := make([]*worker, r.cfg.Clients)
	for i := range ws {
		ws[i] = r.newWorker(i)
	}
	return ws
}

// errorLog counts failures by message and remembers the order in which
// distinct messages first appeared.
type errorLog struct {
	mu     sync.Mutex
	counts map[string]int64
	order  []string
	other  int64
}

func (l *errorLog) add(err error) {
	msg := err.Error()
	var se *statusError
	if !errors.As(err, &se) {
		msg = classify(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.counts == nil {
		l.counts = map[string]int64{}
	}
	if _, ok := l.counts[msg]; !ok && len(l.order) >= maxDistinctErrors {
		l.other++
		return
	}
	if l.counts[msg] == 0 {
		l.order = append(l.order, msg)
	}
	l.counts[msg]++
}

// samples returns the first n distinct errors with their counts.
func (l *errorLog) samples(n int) []ErrorSample {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []ErrorSample
	for _, msg := range l.order {
		if len(out) == n {
			break
		}
		out = append(out, ErrorSample{Message: msg, Count: l.counts[msg]})
	}
	if more := len(l.order) - len(out); more > 0 || l.other > 0 {
		var count int64
		for _, msg := range l.order[len(out):] {
			count += l.counts[msg]
		}
		out = append(out, ErrorSample{
			Message: fmt.Sprintf("(%d more distinct errors)", more+min(int(l.other), 1)),
			Count:   count + l.other,
		})
	}
	return out
}

// worker is one client: its own date cache, PRNG, histogram and buffers, so
// the hot path shares nothing but the HTTP transport.
type worker struct {
	r      *run
	id     int
	dates  dateCache
	rng    *rand.Rand
	hist   *Histogram
	resp   bytes.Buffer
	pk, rk []byte
	entity []byte

	// next is the worker's next key index for the insert and batch phases.
	next                          int64
	ops, failures, requests, rows int64
	insertedIdx                   []int64
}

func (r *run) newWorker(id int) *worker {
	return &worker{
		r:     r,
		id:    id,
		dates: dateCache{now: time.Now},
		rng:   rand.New(rand.NewPCG(r.seed, uint64(id)+1)),
		hist:  NewHistogram(),
	}
}

// send signs and sends one request and reads the response into w.resp. It
// counts the request whether or not it succeeds.
func (w *worker) send(ctx context.Context, method, rawURL string, body []byte, contentType []string, extra func(http.Header)) (*http.Response, error) {
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, reader)
	if err != nil {
		return nil, err
	}
	h := req.Header
	h["X-Ms-Version"] = xmsVersionValue
	h["Dataserviceversion"] = dataServiceValue
	h["Accept"] = acceptValue
	if contentType != nil {
		h["Content-Type"] = contentType
	}
	if extra != nil {
		extra(h)
	}
	if err := signRequest(req, w.r.account, w.r.key, w.dates.get()); err != nil {
		return nil, err
	}
	w.requests++
	return exchange(w.r.client, req, &w.resp)
}

// escapeQueryValue encodes a query value as url.Values.Encode does, which is
// what aztables sends.
func escapeQueryValue(s string) string { return url.QueryEscape(s) }
