package httpapi

import (
	"io"
	"net/http"
	"strings"
	"time"
)

// An answer given before the request body is read (413 for a body past
// 4 MiB, 401 or 403 for its credentials, 400 for its headers) must reach a
// client that is still sending that body. Over HTTP/1.x, net/http closes
// the connection of a request whose handler left more than 256 KiB of the
// body unread: it answers with "Connection: close", stops writing, waits
// half a second and closes. What the client sends after that reaches a
// closed socket, whose kernel answers with a reset, and the client's next
// write of the body fails (EPIPE, ECONNRESET). A client that reports that
// failure before it has read the answer waiting in its socket loses the
// answer: Node's http, under @azure/data-tables, does whenever the write
// error wins the race with the response. So the handler reads and discards
// the rest of the body itself, after it has sent the answer, with the
// request in full-duplex mode so that net/http neither drains nor closes
// before the handler returns; the client finishes sending, reads the
// answer, and keeps the connection.
//
// The drain is bounded: a body declared longer than maxDrainBytes is not
// drained at all (the connection closes as before), at most maxDrainBytes
// are read after the answer, and for at most maxDrainTime, never past the
// body timeout (Limits.BodyTimeout); past a bound the connection is closed. The bytes go to io.Discard, a small
// pooled buffer, and the request keeps its admission slot while it drains,
// so MaxRequests bounds the connections draining at once. HTTP/2 needs
// none of this: net/http ends the stream with RST_STREAM NO_ERROR after
// the answer, which tells the client to stop sending and keep the answer
// (RFC 9113 section 8.1).
const (
	// maxDrainBytes is twice the 4 MiB a request may carry: a client whose
	// body is refused for being a little too large, or for its signature,
	// finishes sending it.
	maxDrainBytes = 2 * maxBody
	// maxDrainTime leaves a client on a slow link time to send that much.
	maxDrainTime = 10 * time.Second
)

// willDrain reports whether the rest of c's body, if any remains once it
// is answered, is read after the answer rather than cut off, and puts the
// request in full-duplex mode for that. It must be called before the
// answer is written.
func (h *Handler) willDrain(c *call) bool {
	r := c.r
	if r.ProtoMajor != 1 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || r.ContentLength > maxDrainBytes {
		return false
	}
	if strings.EqualFold(strings.TrimSpace(r.Header.Get("Expect")), "100-continue") {
		// The client sends the body only when asked, and an answer is not
		// asking: there is nothing coming to drain.
		return false
	}
	// ErrNotSupported where there is no connection (Lambda, recorders).
	return http.NewResponseController(c.w).EnableFullDuplex() == nil
}

// drain sends the answer written so far and reads what is left of c's
// body, within the bounds above.
func (h *Handler) drain(c *call) {
	rc := http.NewResponseController(c.w)
	if rc.Flush() != nil {
		return
	}
	if rc.SetReadDeadline(drainDeadline(time.Now(), c.bodyDeadline)) != nil {
		return
	}
	// One byte past the bound, so that a body of exactly maxDrainBytes
	// ends in io.EOF and keeps its connection.
	if _, err := io.CopyN(io.Discard, c.r.Body, maxDrainBytes+1); err == io.EOF {
		return
	}
	// The bound, the deadline or a broken body stopped it. In full-duplex
	// mode net/http would go on to read the rest of the body as the next
	// request; the connection is closed instead.
	if conn, _, err := rc.Hijack(); err == nil {
		_ = conn.Close()
	}
}

// drainDeadline is when a drain starting at now ends: maxDrainTime later,
// or at the body deadline (zero: none) if that comes first.
func drainDeadline(now, bodyDeadline time.Time) time.Time {
	deadline := now.Add(maxDrainTime)
	if !bodyDeadline.IsZero() && bodyDeadline.Before(deadline) {
		return bodyDeadline
	}
	return deadline
}
