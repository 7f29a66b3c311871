package httpapi

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// RequestStats is what Options.Observe learns of one answered request: the
// figures the local server exports to Prometheus and the Lambda functions
// write as CloudWatch Embedded Metric Format lines. Both come from here, so
// both doors count the same way.
type RequestStats struct {
	// Operation is the REST operation's name (operation.Operation.String),
	// "" when the request failed before it was resolved (an unknown
	// account, a malformed URL, or refused by admission).
	Operation string
	// Account is the account the request named, "" when the server does
	// not know it: only configured accounts appear, so a metric label of
	// it stays bounded.
	Account string
	// Status is the HTTP status answered; 499 when the client went away
	// first, as in the request log.
	Status int
	// Code is the Azure error code of an error answer.
	Code apierr.Code
	// Duration runs from the request's arrival to the end of the answer.
	Duration time.Duration
	// BytesIn is the request body read; BytesOut the answer body written.
	BytesIn, BytesOut int64
	// Refused says which admission bound (Limits) refused the request with
	// 503 ServerBusy: RefusedRequest (requests or body bytes in flight) or
	// RefusedAnswer (answer bytes being written); "" when none did.
	Refused string
}

// The admission bounds of RequestStats.Refused.
const (
	RefusedRequest = "request"
	RefusedAnswer  = "answer"
)

// countingBody counts what the handler reads of a request body.
type countingBody struct {
	io.ReadCloser
	n int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

// countBody makes c count the body bytes read, when someone observes them.
func (h *Handler) countBody(c *call) {
	if h.opts.Observe == nil || c.r.Body == nil || c.r.Body == http.NoBody {
		return
	}
	c.body = &countingBody{ReadCloser: c.r.Body}
	c.r.Body = c.body
}

// observe reports the answered request to Options.Observe.
func (h *Handler) observe(c *call, start time.Time, status int, code apierr.Code, err error, refused string) {
	if h.opts.Observe == nil {
		return
	}
	if clientCancelled(c.r) {
		status, code = statusClientClosedRequest, ""
	}
	if refused != "" && !errors.Is(err, errOverloaded) {
		refused = ""
	}
	s := RequestStats{Operation: c.opName(), Account: c.account, Status: status, Code: code,
		Duration: time.Since(start), BytesOut: int64(c.bytesOut), Refused: refused}
	if c.body != nil {
		s.BytesIn = c.body.n
	}
	h.opts.Observe(s)
}
