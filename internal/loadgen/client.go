package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Header values aztables sends on every table operation. Shared slices are
// safe: net/http only reads request headers.
var (
	xmsVersionValue  = []string{"2019-02-02"}
	dataServiceValue = []string{"3.0"}
	acceptValue      = []string{"application/json;odata=minimalmetadata"}
	jsonContentType  = []string{"application/json"}
	returnNoContent  = []string{"return-no-content"}
)

// newTransport returns a keep-alive transport sized for the worker count
// whose dialer refuses non-loopback addresses unless allowRemote is set. The
// check runs on the resolved address at connect time (net.Dialer.Control), so
// it holds for names as well as literals.
func newTransport(clients int, allowRemote bool) *http.Transport {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowRemote {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return fmt.Errorf("%w: refusing to dial %s", ErrRemoteEndpoint, address)
			}
			return nil
		}
	}
	return &http.Transport{
		Proxy:               nil, // never route bench traffic through a proxy
		DialContext:         dialer.DialContext,
		MaxIdleConns:        2 * clients,
		MaxIdleConnsPerHost: 2 * clients,
		IdleConnTimeout:     90 * time.Second,
		// HTTP/1.1 keep-alive like the SDK against http endpoints; no HTTP/2
		// multiplexing that would make clients share one connection.
		ForceAttemptHTTP2:     false,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 0, // the per-request context bounds the wait
	}
}

// statusError is a response with an unexpected status. Code is the
// x-ms-error-code header (or the odata.error code from the body).
type statusError struct {
	Op      string
	Status  int
	Code    string
	Message string
}

func (e *statusError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d", e.Op, e.Status)
	if e.Code != "" {
		s += " " + e.Code
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// newStatusError reads what an Azure error response says about itself.
func newStatusError(op string, resp *http.Response, body []byte) *statusError {
	e := &statusError{Op: op, Status: resp.StatusCode, Code: resp.Header.Get("x-ms-error-code")}
	if suffix := errorCodeSuffix(body); suffix != "" {
		code, msg, _ := strings.Cut(strings.TrimSpace(suffix), ": ")
		if e.Code == "" {
			e.Code = code
		}
		// errorCodeSuffix stops at the first escape, which drops Azure's
		// "\nRequestId:...\nTime:..." tail, so equal errors group together.
		e.Message = msg
	} else if len(body) > 0 {
		e.Message = strings.TrimSpace(string(body[:min(len(body), 200)]))
	}
	return e
}

// exchange sends one request and reads the whole response body into buf
// (reading it to the end lets the connection be reused).
func exchange(client *http.Client, req *http.Request, buf *bytes.Buffer) (*http.Response, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("reading response: %w", err)
	}
	return resp, nil
}

// classify turns a transport error into the short text the error report
// groups by. Context cancellation from the run's own shutdown is reported
// separately by the caller.
func classify(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "request timed out"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "connection closed by server: " + err.Error()
	}
	return err.Error()
}
