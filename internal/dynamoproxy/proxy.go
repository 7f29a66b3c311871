package dynamoproxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Config configures a Proxy.
type Config struct {
	// Upstream is the DynamoDB endpoint the proxy forwards to, e.g.
	// dynamolocal.Endpoint(t).
	Upstream string
	// Capacity is the capacity model; the zero value throttles nothing.
	Capacity Capacity
	// Clock is the capacity model's clock; nil is the real one.
	Clock Clock
	// Faults chooses a fault for each item request; nil injects none.
	Faults Policy
}

// Proxy is a DynamoDB endpoint on a loopback port that forwards to an
// upstream, counting, throttling and faulting as configured. Its methods
// are safe for concurrent use.
type Proxy struct {
	up      *upstream
	schemas schemas
	buckets *buckets
	policy  Policy
	faults  faultLog
	runs    runs
	srv     *http.Server
	url     string

	statsMu sync.Mutex
	stats   Stats

	workMu sync.Mutex
	active int             // requests not yet finished upstream, held ones included
	idle   []chan struct{} // closed when active drops to 0
	stop   chan struct{}   // closed by Close: held requests go at once
	closed bool
}

// Start listens on a free loopback port and serves until Close.
func Start(cfg Config) (*Proxy, error) {
	up, err := newUpstream(cfg.Upstream)
	if err != nil {
		return nil, err
	}
	clock := cfg.Clock
	if clock == nil {
		clock = realClock{}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{
		up:      up,
		buckets: &buckets{capacity: cfg.Capacity, clock: clock},
		policy:  cfg.Faults,
		url:     "http://" + ln.Addr().String(),
		stats:   Stats{Ops: map[string]int64{}, Keys: map[Key]Usage{}},
		stop:    make(chan struct{}),
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the proxy's endpoint, http://127.0.0.1:port, for the SDK's
// BaseEndpoint or TABLEBRIDGE_DYNAMODB_ENDPOINT.
func (p *Proxy) URL() string { return p.url }

// Close stops accepting requests, lets held requests go upstream at once,
// and waits (at most a minute) until every request has finished upstream.
func (p *Proxy) Close() error {
	p.workMu.Lock()
	if !p.closed {
		p.closed = true
		close(p.stop)
	}
	p.workMu.Unlock()
	err := p.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return errors.Join(err, p.Settle(ctx))
}

// Settle waits until no request is being worked on: every request received
// has been answered, and those whose clients were cut off or gave up
// (InFlight, Slow) have been applied upstream. An InFlight attempt still
// held for a retry of its ClientRequestToken goes at once: Settle is for
// when the workload is over. Call it before checking what a faulted history
// left in DynamoDB.
func (p *Proxy) Settle(ctx context.Context) error {
	p.runs.releaseAll()
	p.workMu.Lock()
	if p.active == 0 {
		p.workMu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	p.idle = append(p.idle, ch)
	p.workMu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stats returns a snapshot of the counts.
func (p *Proxy) Stats() Stats {
	p.statsMu.Lock()
	defer p.statsMu.Unlock()
	return p.stats.clone()
}

// Faults lists the faults injected, in the order they were.
func (p *Proxy) Faults() []FaultRecord { return p.faults.list() }

func (p *Proxy) enter() bool {
	p.workMu.Lock()
	defer p.workMu.Unlock()
	if p.closed {
		return false
	}
	p.active++
	return true
}

func (p *Proxy) leave() {
	p.workMu.Lock()
	defer p.workMu.Unlock()
	p.active--
	if p.active == 0 {
		for _, ch := range p.idle {
			close(ch)
		}
		p.idle = nil
	}
}

// wait sleeps d, or with d 0 until ctx ends (the client gave up); Close
// cuts either short.
func (p *Proxy) wait(ctx context.Context, d time.Duration) {
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout, ctx = t.C, context.Background()
	}
	select {
	case <-timeout:
	case <-ctx.Done():
	case <-p.stop:
	}
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if !p.enter() {
		writeAnswer(w, http.StatusServiceUnavailable, nil, internalErrorBody())
		return
	}
	detached := false
	defer func() {
		if !detached {
			p.leave()
		}
	}()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		writeAnswer(w, http.StatusRequestEntityTooLarge, nil, errorBody("ValidationException", map[string]any{"message": err.Error()}))
		return
	}
	op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), targetPrefix)
	p.statsMu.Lock()
	p.stats.Ops[op]++
	p.statsMu.Unlock()
	// Work on a request goes on when its client leaves: DynamoDB applies
	// what it received.
	ctx := context.WithoutCancel(r.Context())
	if !itemOps[op] {
		p.relay(ctx, w, r, op, body)
		return
	}
	a, err := p.analyze(ctx, r, op, body)
	if err != nil {
		p.relay(ctx, w, r, op, body)
		return
	}
	detached = p.serveItem(ctx, w, r, a)
}

// relay forwards a request the proxy does not account (the control plane,
// or an item request it could not read) and its answer as they are. A
// change to a table's schema makes the proxy describe it again.
func (p *Proxy) relay(ctx context.Context, w http.ResponseWriter, r *http.Request, op string, body []byte) {
	ans, err := p.up.forward(ctx, r, body)
	if err != nil {
		writeAnswer(w, http.StatusInternalServerError, nil, internalErrorBody())
		return
	}
	if itemOps[op] {
		p.statsMu.Lock()
		p.stats.Requests++
		p.statsMu.Unlock()
	}
	switch op {
	case "CreateTable", "DeleteTable", "UpdateTable":
		if in, ok := decodeObject(body); ok {
			p.schemas.forget(namespace(r.Header), in.str("TableName"))
		}
	}
	writeAnswer(w, ans.status, ans.header, ans.body)
}

// serveItem serves an item request: the in-progress check of its
// ClientRequestToken, the fault the policy chooses, the capacity model,
// then the forwarding. It reports whether it left the request to a
// goroutine of its own (InFlight), which then calls leave.
func (p *Proxy) serveItem(ctx context.Context, w http.ResponseWriter, r *http.Request, a *analysis) bool {
	req := Request{Op: a.op, Keys: a.keys(), Write: a.write, Token: a.token, Attempt: attempt(r.Header)}
	runID := namespace(r.Header) + " " + a.token
	var tokenRun *run
	if a.token != "" {
		var ok bool
		if tokenRun, ok = p.runs.begin(runID); !ok {
			p.faults.add(FaultRecord{Fault: Fault{Kind: InProgress}, Op: a.op, Keys: req.Keys, Token: a.token})
			writeAnswer(w, http.StatusBadRequest, nil, inProgressBody())
			return false
		}
	}
	endRun := func() {
		if tokenRun != nil {
			p.runs.end(runID)
		}
	}
	var fault Fault
	if p.policy != nil {
		fault = p.policy(req)
	}
	if fault.Kind == InProgress || fault.Kind == Conflict && !conflictOps[a.op] {
		fault = Fault{}
	}
	record := func() *FaultRecord {
		return p.faults.add(FaultRecord{Fault: fault, Op: a.op, Keys: req.Keys, Token: a.token})
	}
	switch fault.Kind {
	case Throttle:
		record()
		p.throttleAll(w, a)
		endRun()
		return false
	case Conflict:
		record()
		writeAnswer(w, http.StatusBadRequest, nil, conflictBody(a))
		endRun()
		return false
	}
	if !p.admit(w, a) { // throttled by the model before any fault could act
		endRun()
		return false
	}
	var rec *FaultRecord
	if fault.Kind != "" {
		rec = record()
	}
	if fault.Kind == InFlight {
		breakConnection(w)
		go func() {
			defer p.leave()
			defer endRun()
			switch {
			case fault.Delay > 0:
				p.wait(ctx, fault.Delay)
			case tokenRun != nil:
				select {
				case <-tokenRun.retried:
				case <-p.stop:
				}
			}
			if ans := p.exchange(ctx, r, a); ans != nil {
				p.faults.setStatus(rec, ans.status)
			}
		}()
		return true
	}
	if fault.Kind == Slow && !fault.AfterApply {
		p.wait(r.Context(), fault.Delay)
	}
	ans := p.exchange(ctx, r, a)
	endRun()
	if ans == nil {
		writeAnswer(w, http.StatusInternalServerError, nil, internalErrorBody())
		return false
	}
	if rec != nil {
		p.faults.setStatus(rec, ans.status)
	}
	switch {
	case fault.Kind == LoseAnswer:
		breakConnection(w)
		return false
	case fault.Kind == Slow && fault.AfterApply:
		p.wait(r.Context(), fault.Delay)
	}
	writeAnswer(w, ans.status, ans.header, ans.body)
	return false
}

// exchange forwards the request, accounts what it did and returns the
// answer for the client; nil when the upstream could not be reached.
func (p *Proxy) exchange(ctx context.Context, r *http.Request, a *analysis) *answer {
	ans, err := p.up.forward(ctx, r, a.body.encode())
	if err != nil {
		return nil
	}
	p.account(ctx, r, a, ans)
	return a.clientAnswer(ans)
}

// breakConnection resets the client's connection without an answer, as a
// network failure does: SO_LINGER 0 makes the close send RST, so the client
// reads "connection reset by peer".
func breakConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}
