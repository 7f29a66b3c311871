package lambdafn

import (
	"context"
	"time"
)

// The request's deadline. Two clocks run against a request behind API
// Gateway, and the handler must answer before either runs out, or the
// client gets no Azure answer at all:
//
//   - API Gateway's integration timeout, 29 s for a REST API (its default)
//     and at most 30 s for an HTTP API, counted from when the gateway
//     received the request (requestContext.requestTimeEpoch, or timeEpoch
//     in payload 2.0), so a cold start's init is part of it. Past it the
//     client gets the gateway's bare 504.
//   - The invocation's own deadline (the function's Timeout, 30 s in
//     template.yaml), which the runtime puts on Invoke's context. Past it
//     Lambda stops the process mid-operation, and the gateway answers 502
//     or 504.
//
// requestDeadline is the earlier of the two, less answerMargin. The 29 s
// applies to Function URL events too: their limit is the function's
// timeout, 30 s, so the difference is one second, and one rule is simpler.
// With the deadline on the request's context, every step that honours the
// context (DynamoDB calls, the store's paging loops, the handler's own
// timeout) ends in time for Azure's answer: 503 ServerBusy when nothing was
// written, 500 OperationTimedOut when a write may have been (see
// SECURITY.md).
const (
	gatewayTimeout = 29 * time.Second
	// answerMargin is left to build and return the answer after the
	// deadline: encoding a page of up to 5 MiB into the proxy response and
	// posting it to the Runtime API take tens of milliseconds; a DynamoDB
	// call in flight returns as soon as its context ends.
	answerMargin = time.Second
)

// requestDeadline is when the handler must stop working on a request that
// API Gateway received at received (zero when the event does not say) and
// Lambda invoked at now, with the invocation's own deadline on ctx.
func requestDeadline(ctx context.Context, now, received time.Time) time.Time {
	// A receipt time older than the gateway's timeout is no live reading:
	// the gateway has given up already, so it comes from a stored event
	// (sam local invoke, a replayed fixture), which still gets its answer.
	start := now
	if !received.IsZero() && received.Before(now) && now.Sub(received) < gatewayTimeout {
		start = received
	}
	deadline := start.Add(gatewayTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	return deadline.Add(-answerMargin)
}

// receivedAt is when API Gateway (or the Function URL) received the
// request, from the event's epoch milliseconds; zero when it is missing.
func (ev event) receivedAt() time.Time {
	var ms int64
	switch {
	case ev.v2 != nil:
		ms = ev.v2.RequestContext.TimeEpoch
	case ev.v1 != nil:
		ms = ev.v1.RequestContext.RequestTimeEpoch
	}
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
