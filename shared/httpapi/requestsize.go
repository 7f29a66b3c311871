package httpapi

import (
	"net/http"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// Request line and header limits. Azure documents no URL limit for the
// Table service; what it documents bounds an address instead: two keys of
// 1 KiB characters each, which percent-encoded as UTF-8 take up to 18 KiB
// of path. MaxURLBytes holds that with room for a query, and everything
// past it is refused the way the rest of the service refuses input: an
// Azure error body with x-ms-request-id, not the transport's plain text.
// Behind API Gateway its own, lower limits come first (a URL of 8,192
// characters on an edge-optimized API, 10,240 on a regional one, 10,240
// bytes of headers): those answers are the gateway's.
const (
	// MaxURLBytes bounds the request target as sent: path and query.
	MaxURLBytes = 32 << 10
	// MaxHeaderBytes bounds the request headers, names and values.
	MaxHeaderBytes = 64 << 10
	// ServerMaxHeaderBytes is what an http.Server in front of the handler
	// should read of request line and headers (http.Server.MaxHeaderBytes):
	// enough past both limits that the handler answers an oversize request
	// itself. Only a request past this gets net/http's own plain-text 431.
	ServerMaxHeaderBytes = 256 << 10
)

// checkRequestSize refuses a request whose target or headers are over the
// limits: 414 InvalidUri for the URL (the status Azure's front end answers
// a URL it will not take) and 400 InvalidHeaderValue for the headers.
func checkRequestSize(r *http.Request) error {
	target := len(r.RequestURI)
	if target == 0 {
		target = len(r.URL.RequestURI())
	}
	if target > MaxURLBytes {
		return urlTooLong(target)
	}
	n := len(r.Host)
	for name, values := range r.Header {
		for _, v := range values {
			n += len(name) + len(v) + len(": \r\n")
		}
	}
	if n > MaxHeaderBytes {
		return apierr.Newf(apierr.InvalidHeaderValue, "The request headers are %d bytes; the service accepts at most %d.", n, MaxHeaderBytes)
	}
	return nil
}

// urlTooLong is the answer to a URL of n bytes, past MaxURLBytes.
func urlTooLong(n int) *apierr.Error {
	err := apierr.Newf(apierr.InvalidURI, "The request URL is %d bytes; the service accepts at most %d.", n, MaxURLBytes)
	err.Status = http.StatusRequestURITooLong
	return err
}
