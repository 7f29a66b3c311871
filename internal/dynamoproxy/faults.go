package dynamoproxy

import (
	"math/rand/v2"
	"slices"
	"sync"
	"time"
)

// FaultKind names a fault the proxy injects.
type FaultKind string

const (
	// Throttle answers as DynamoDB answers a request throttled on its first
	// key (see doc.go for each operation's answer), without forwarding it:
	// nothing is applied.
	Throttle FaultKind = "throttle"
	// LoseAnswer forwards the request, so DynamoDB applies it, then resets
	// the client's connection instead of answering, as a network failure
	// after the write would.
	LoseAnswer FaultKind = "lose-answer"
	// InFlight resets the client's connection at once and forwards the
	// request afterwards, so it lands after the client saw the connection
	// break: a transaction in flight when the connection broke. Retries of
	// its ClientRequestToken meanwhile are answered
	// TransactionInProgressException (see InProgress).
	InFlight FaultKind = "in-flight"
	// Conflict answers as DynamoDB answers a write that meets another
	// transaction on its item, without forwarding it: a transaction is
	// cancelled with the reason TransactionConflict on its first item, a
	// single-item write gets TransactionConflictException. Other
	// operations cannot conflict and are not faulted.
	Conflict FaultKind = "conflict"
	// Slow delays the request: before forwarding it, or, with AfterApply,
	// after DynamoDB applied it and before answering. Either way the
	// request is applied even when its client gave up waiting.
	Slow FaultKind = "slow"
	// InProgress is not chosen by a Policy: the proxy records it each time
	// it answers TransactionInProgressException to a TransactWriteItems
	// whose ClientRequestToken belongs to an attempt still running (held
	// by InFlight or Slow, or simply not yet answered), as DynamoDB does.
	InProgress FaultKind = "in-progress"
)

// Fault is what a Policy chooses for one request. The zero Fault is none.
type Fault struct {
	Kind FaultKind
	// Delay is how long Slow waits, or how long InFlight holds the request
	// before forwarding it. Zero means: Slow waits until the client gives
	// up (its deadline passes and it closes the connection); InFlight
	// holds the request until a retry of its ClientRequestToken has been
	// answered TransactionInProgressException, or Settle or Close is
	// called (without a token it forwards at once).
	Delay time.Duration
	// AfterApply makes Slow delay the answer of an applied request instead
	// of the request.
	AfterApply bool
}

// Request is what a Policy sees of a request before it is forwarded.
type Request struct {
	Op      string // the operation, e.g. "PutItem"
	Keys    []Key  // the keys it touches, as far as the request shows them
	Write   bool
	Token   string // a TransactWriteItems' ClientRequestToken
	Attempt int    // the SDK's attempt number of its call (amz-sdk-request), 0 if not sent
}

// Policy chooses the fault for each item request. The proxy calls it from
// many goroutines at once.
type Policy func(Request) Fault

// conflictOps are the operations that can meet another transaction.
var conflictOps = map[string]bool{
	"PutItem": true, "UpdateItem": true, "DeleteItem": true, "TransactWriteItems": true, "TransactGetItems": true,
}

// FaultRates are the probabilities of each fault per request, for
// RandomFaults. InFlight applies to writes only, Conflict to the operations
// that can conflict; the others to every item request.
type FaultRates struct {
	Throttle, LoseAnswer, InFlight, Conflict, Slow float64
	// Delay is the Delay of the Slow and InFlight faults chosen.
	Delay time.Duration
}

// RandomFaults is a Policy drawing faults at the given rates from a
// generator seeded with seed; half of its Slow faults delay the answer
// (AfterApply). The same seed gives the same sequence of choices; which
// request gets which choice depends on the order requests arrive in.
func RandomFaults(seed uint64, rates FaultRates) Policy {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 0x6479_6e61_6d6f))
	return func(r Request) Fault {
		mu.Lock()
		x, after := rng.Float64(), rng.IntN(2) == 1
		mu.Unlock()
		for _, c := range []struct {
			kind    FaultKind
			rate    float64
			applies bool
		}{
			{Throttle, rates.Throttle, true},
			{LoseAnswer, rates.LoseAnswer, true},
			{InFlight, rates.InFlight, r.Write},
			{Conflict, rates.Conflict, conflictOps[r.Op]},
			{Slow, rates.Slow, true},
		} {
			if !c.applies {
				continue
			}
			if x < c.rate {
				return Fault{Kind: c.kind, Delay: rates.Delay, AfterApply: c.kind == Slow && after}
			}
			x -= c.rate
		}
		return Fault{}
	}
}

// FaultRecord is one fault injected: the Fault as the Policy chose it (Kind
// alone for InProgress) and the request it hit.
type FaultRecord struct {
	Fault
	Op    string
	Keys  []Key
	Token string
	// Status is the HTTP status DynamoDB answered the forwarded request
	// with: 200 when LoseAnswer, InFlight or Slow let a request be
	// applied, 0 while (or when) it was not forwarded.
	Status int
}

type faultLog struct {
	mu      sync.Mutex
	records []*FaultRecord
}

func (l *faultLog) add(rec FaultRecord) *FaultRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := &rec
	l.records = append(l.records, r)
	return r
}

func (l *faultLog) setStatus(r *FaultRecord, status int) {
	l.mu.Lock()
	r.Status = status
	l.mu.Unlock()
}

func (l *faultLog) list() []FaultRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]FaultRecord, len(l.records))
	for i, r := range l.records {
		out[i] = *r
		out[i].Keys = slices.Clone(r.Keys)
	}
	return out
}

// runs tracks the TransactWriteItems attempts running per
// ClientRequestToken: DynamoDB answers a second attempt with the same token
// TransactionInProgressException while the first still runs ("Idempotency"
// in TransactWriteItems, API Reference).
type runs struct {
	mu sync.Mutex
	m  map[string]*run
}

type run struct {
	retried chan struct{} // closed when a retry was told the attempt is in progress
	once    sync.Once
}

// begin registers an attempt for token; ok is false when one is already
// running, which begin then marks as retried.
func (rs *runs) begin(token string) (*run, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.m[token]; r != nil {
		r.once.Do(func() { close(r.retried) })
		return nil, false
	}
	if rs.m == nil {
		rs.m = map[string]*run{}
	}
	r := &run{retried: make(chan struct{})}
	rs.m[token] = r
	return r, true
}

// releaseAll lets every attempt held for a retry go: no retry is coming.
func (rs *runs) releaseAll() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.m {
		r.once.Do(func() { close(r.retried) })
	}
}

func (rs *runs) end(token string) {
	rs.mu.Lock()
	delete(rs.m, token)
	rs.mu.Unlock()
}
