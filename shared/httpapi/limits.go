package httpapi

import (
	"errors"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
)

// Limits bound what requests in flight may hold and how long a client may
// take to send a body or read an answer. The deadlines need a ResponseWriter
// that supports them (net/http's, through http.ResponseController); behind
// API Gateway and Lambda they do not apply, and the gateway's own limits do.
type Limits struct {
	// BodyTimeout bounds reading a request body, counted from the moment
	// the handler starts: a client that sends its body slower than that
	// gets 500 OperationTimedOut, Azure's answer to a client too slow for
	// the service (Storage Analytics logs it as ClientTimeoutError), and
	// the connection is closed. 30 s when 0; none when negative.
	BodyTimeout time.Duration
	// WriteTimeout bounds writing a response, counted from its first byte:
	// a client that stops reading loses the connection, and the response
	// buffer is released. 30 s when 0; none when negative.
	WriteTimeout time.Duration
	// MaxRequests bounds the requests in flight, answers being written
	// included; MaxBodyBytes bounds the request bodies they may hold, each
	// counted at its declared Content-Length, or at the 4 MiB limit when
	// it declares none (chunked). A request past either bound is answered
	// 503 ServerBusy at once, before its body is read, which the Azure
	// SDKs retry with backoff. 0 is unbounded: the local server sets them;
	// a Lambda execution environment serves one request at a time.
	MaxRequests  int
	MaxBodyBytes int64
	// MaxAnswerBytes bounds the answer bodies being written at once: a
	// client that does not read holds its answer (up to a page, a few MiB)
	// until WriteTimeout. An answer past the bound, while others are being
	// written, is replaced by 503 ServerBusy. 0 is unbounded.
	MaxAnswerBytes int64
	// ReturnMemory hands the heap a burst of request bodies grew back to
	// the OS once the burst is over: when the body bytes in flight fall to
	// zero after reaching burstBytes, at most once per burstCooldown. The
	// runtime would keep it for minutes (its scavenger returns memory
	// slowly, and only below a heap goal that the burst raised).
	ReturnMemory bool
}

// A burst worth returning memory after, and how often it may be done: a
// forced collection of a heap that is mostly garbage costs a few ms.
const (
	burstBytes    = 32 << 20
	burstCooldown = 5 * time.Second
)

const defaultIOTimeout = 30 * time.Second

// errOverloaded marks the 503 of a request refused by admission. It is not
// logged as a failure: a flood would otherwise turn into a flood of log
// lines, and nothing failed.
var errOverloaded = errors.New("httpapi: in-flight bounds reached")

func (l *Limits) setDefaults() {
	if l.BodyTimeout == 0 {
		l.BodyTimeout = defaultIOTimeout
	}
	if l.WriteTimeout == 0 {
		l.WriteTimeout = defaultIOTimeout
	}
}

// admission counts the requests and body bytes in flight against Limits.
type admission struct {
	mu       sync.Mutex
	requests int
	bytes    int64
	answers  int64 // answer body bytes being written
	// peak is the most body bytes in flight since memory was last
	// returned, at lastReturn.
	peak       int64
	lastReturn time.Time
}

// released gives back a request's body bytes and reports whether a burst
// just ended whose memory should go back to the OS. Called with a.mu held.
func (a *admission) released(size int64, l *Limits) bool {
	a.requests--
	a.bytes -= size
	if !l.ReturnMemory || a.bytes != 0 || a.peak < burstBytes || time.Since(a.lastReturn) < burstCooldown {
		return false
	}
	a.peak, a.lastReturn = 0, time.Now()
	return true
}

// admit reserves r's share of the in-flight bounds, or answers 503
// ServerBusy. The release func gives it back; it must run once the answer is
// written, so a client that reads slowly holds its share until then.
func (h *Handler) admit(r *http.Request) (release func(), err error) {
	l := &h.opts.Limits
	if l.MaxRequests <= 0 && l.MaxBodyBytes <= 0 && !l.ReturnMemory {
		return func() {}, nil
	}
	var size int64
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
	case r.ContentLength < 0:
		size = maxBody
	case r.ContentLength <= maxBody:
		size = r.ContentLength
		// A larger body is refused with 413 before a byte of it is read.
	}
	a := &h.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	if (l.MaxRequests > 0 && a.requests >= l.MaxRequests) ||
		(l.MaxBodyBytes > 0 && size > 0 && a.bytes+size > l.MaxBodyBytes) {
		return nil, &apierr.Error{Code: apierr.ServerBusy, Err: errOverloaded,
			Detail: "Too many requests or request bytes in flight on this server; retry later."}
	}
	a.requests++
	a.bytes += size
	a.peak = max(a.peak, a.bytes)
	return func() {
		a.mu.Lock()
		burstOver := a.released(size, l)
		a.mu.Unlock()
		if burstOver {
			go debug.FreeOSMemory()
		}
	}, nil
}

// admitAnswer reserves resp's body against MaxAnswerBytes, or answers 503
// ServerBusy. One answer is always admitted when none is being written, so
// an answer larger than the bound can still go out.
func (h *Handler) admitAnswer(resp *response) (release func(), err error) {
	limit, size := h.opts.Limits.MaxAnswerBytes, int64(len(resp.body))
	if limit <= 0 || size == 0 {
		return func() {}, nil
	}
	a := &h.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.answers > 0 && a.answers+size > limit {
		return nil, &apierr.Error{Code: apierr.ServerBusy, Err: errOverloaded,
			Detail: "Too many answer bytes waiting for slow clients on this server; retry later."}
	}
	a.answers += size
	return func() {
		a.mu.Lock()
		a.answers -= size
		a.mu.Unlock()
	}, nil
}

// startBodyDeadline bounds the time left to read c's body.
func (h *Handler) startBodyDeadline(c *call) {
	if d := h.opts.Limits.BodyTimeout; d > 0 && c.r.Body != nil && c.r.Body != http.NoBody {
		c.bodyDeadline = time.Now().Add(d)
		// ErrNotSupported (Lambda, recorders) leaves the transport's limits.
		_ = http.NewResponseController(c.w).SetReadDeadline(c.bodyDeadline)
	}
}

// startWriteDeadline bounds the time left to write the answer.
func (h *Handler) startWriteDeadline(w http.ResponseWriter) {
	if d := h.opts.Limits.WriteTimeout; d > 0 {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
	}
}

// maxBody caps request bodies at Azure's per-call limit ("MaxLimit:
// 4194304" in its RequestBodyTooLarge answers), which is also a $batch's.
// An entity is at most 1 MiB as Azure counts it, but its JSON can be three
// times that when its strings are escaped (\u0001 is 6 bytes for one UTF-16
// unit that counts 2), so a lower bound for single entities would refuse
// entities Azure stores. What a body may cost beyond its bytes is bounded by
// the decoders (edm.MaxMembers, model.MaxBatchOperations).
const maxBody = batch.MaxBodyBytes

// maxXMLBody caps the XML bodies (Set Table ACL, Set Table Service
// Properties): the largest valid one, five CORS rules of 64 origins of 256
// characters each, is about 80 KiB. encoding/xml allocates some twenty
// times what it decodes, so the 4 MiB bound of entities would let one
// request cost 80 MiB.
const maxXMLBody = 256 << 10

// readXMLBody is readBody bounded by maxXMLBody.
func readXMLBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > maxXMLBody {
		return nil, apierr.New(apierr.RequestBodyTooLarge)
	}
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	return batch.ReadBody(http.MaxBytesReader(nil, body, maxXMLBody), r.ContentLength)
}

// readBody reads the request body whole, refusing more than maxBody with
// 413 before reading when the length is declared; see batch.ReadBody. The
// body is read into a pooled buffer: the caller hands it back with
// putBodyBuffer once it is done with it. The decoders copy what they keep
// (edm strings, binary values, error messages), so nothing they return
// refers to it.
func readBody(r *http.Request) ([]byte, error) {
	body, err := batch.ReadBodyInto(getBodyBuffer(), r.Body, r.ContentLength)
	if err != nil {
		return nil, err
	}
	if err := batch.CheckContentMD5(r.Header, body); err != nil {
		putBodyBuffer(body)
		return nil, err
	}
	return body, nil
}
