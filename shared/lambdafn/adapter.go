package lambdafn

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Handler is one Lambda function: API Gateway REST API events (Lambda proxy
// integration, payload format 1.0) in, proxy responses out, served by the
// REST API handler over a store that lets the function reach only its own
// operations.
type Handler struct {
	fn   Function
	http *httpapi.Handler
	log  *slog.Logger
}

// NewHandler builds fn's handler over st for accounts. opts configure the
// REST API handler; TrustForwardedHeaders is always on, because API Gateway
// terminates TLS and NewRequest sets X-Forwarded-Proto and X-Forwarded-For
// from what API Gateway saw.
func NewHandler(fn Function, st store.Store, accounts []auth.Account, opts httpapi.Options) (*Handler, error) {
	if st == nil {
		return nil, fmt.Errorf("lambdafn: %s: nil store", fn.Name)
	}
	opts.TrustForwardedHeaders = true
	h, err := httpapi.NewHandler(newGuardStore(st, fn), accounts, opts)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: %s: %w", fn.Name, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Handler{fn: fn, http: h, log: log}, nil
}

// Invoke serves one event. It never returns an error: an error would make
// API Gateway answer 502 with a body no Azure SDK understands, so even an
// event that cannot become a request gets an Azure-shaped 400.
func (h *Handler) Invoke(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	ctx = withCapacityMeter(ctx)
	r, err := NewRequest(ctx, ev)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "unusable API Gateway event",
			slog.String("function", h.fn.Name), slog.String("path", ev.Path), slog.String("err", err.Error()))
		// No request to serve: answer through the REST handler's error
		// writer with a placeholder request, so the client still gets a
		// code it knows.
		placeholder, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
		return Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.http.ServeError(w, r, err) }), placeholder), nil
	}
	return Serve(h.http, r), nil
}

// Serve runs r through handler and returns what API Gateway expects back:
// the status, every header with all its values (multiValueHeaders, so a
// value holding a comma stays one value), and the body, base64-encoded
// (isBase64Encoded) unless it is valid UTF-8. The API's BinaryMediaTypes
// are */*, so API Gateway decodes a base64 body back to the exact bytes.
func Serve(handler http.Handler, r *http.Request) events.APIGatewayProxyResponse {
	w := core.NewProxyResponseWriter()
	handler.ServeHTTP(w, r)
	resp, err := w.GetProxyResponse()
	if err != nil {
		// The handler wrote nothing at all, which httpapi never does.
		return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError,
			MultiValueHeaders: map[string][]string{"X-Ms-Error-Code": {string(apierr.InternalError)}}}
	}
	return resp
}

// NewRequest turns an API Gateway REST API proxy event into the request the
// client sent:
//
//   - The path the client signed (SharedKey signs the wire path) is
//     requestContext.path, which keeps the stage ("/Prod/acct/Tables") or a
//     custom domain's base path. The handler routes on the part the
//     resource template matched ("/acct/Tables") and gets the signed path
//     through httpapi.WithSignedPath. Both stay percent-encoded as sent:
//     REST APIs do not decode the path (only its pathParameters).
//   - Query parameters arrive decoded in multiValueQueryStringParameters;
//     they are re-encoded into RawQuery (url.Values.Encode), so a $filter
//     with ', %, +, &, = or any Unicode decodes back to exactly what the
//     client meant.
//   - Headers come from multiValueHeaders, value by value, never split on
//     commas: x-ms-date ("Sun, 11 Oct 2009 21:49:42 GMT"), ETags and Prefer
//     must arrive intact for SharedKey and the protocol.
//   - X-Forwarded-For is replaced by requestContext.identity.sourceIp, which
//     API Gateway determined itself; a client-supplied X-Forwarded-For could
//     otherwise pass a SAS sip check. X-Forwarded-Proto defaults to https,
//     the only scheme an API Gateway endpoint serves.
//   - A body with isBase64Encoded is decoded.
func NewRequest(ctx context.Context, ev events.APIGatewayProxyRequest) (*http.Request, error) {
	method := strings.ToUpper(ev.HTTPMethod)
	if method == "" {
		return nil, apierr.Newf(apierr.InvalidInput, "The event has no httpMethod; it is not an API Gateway REST API proxy event.")
	}
	routed := ev.Path
	if routed == "" {
		routed = "/"
	}
	signed := ev.RequestContext.Path
	if _, r, ok := splitStagePath(signed, ev.Resource); ok {
		routed = r
	} else if signed == "" || !strings.HasSuffix(signed, routed) {
		// No usable requestContext.path (a hand-written event): the client
		// signed the path it sent.
		signed = routed
	}
	decoded, err := url.PathUnescape(routed)
	if err != nil {
		return nil, apierr.Newf(apierr.InvalidURI, "The request path %q is not validly percent-encoded.", routed)
	}

	// Encode only reads the map, so the event's own serves as is.
	query := url.Values(ev.MultiValueQueryStringParameters)
	if len(query) == 0 && len(ev.QueryStringParameters) > 0 {
		query = make(url.Values, len(ev.QueryStringParameters))
		for k, v := range ev.QueryStringParameters {
			query.Set(k, v)
		}
	}
	rawQuery := query.Encode()

	header := make(http.Header, len(ev.MultiValueHeaders)+3)
	if len(ev.MultiValueHeaders) > 0 {
		for k, vs := range ev.MultiValueHeaders {
			for _, v := range vs {
				header.Add(k, v)
			}
		}
	} else {
		for k, v := range ev.Headers {
			header.Add(k, v)
		}
	}
	host := header.Get("Host")
	header.Del("Host")
	if host == "" {
		host = ev.RequestContext.DomainName
	}
	if header.Get("X-Forwarded-Proto") == "" {
		header.Set("X-Forwarded-Proto", "https")
	}
	sourceIP := ev.RequestContext.Identity.SourceIP
	if sourceIP != "" {
		header.Set("X-Forwarded-For", sourceIP)
	}

	var body []byte
	if ev.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
			return nil, apierr.Newf(apierr.InvalidInput, "The event body is marked isBase64Encoded but is not base64: %v.", err)
		}
	} else {
		body = []byte(ev.Body)
	}

	requestURI := signed
	if rawQuery != "" {
		requestURI += "?" + rawQuery
	}
	r := &http.Request{
		Method: method,
		URL: &url.URL{
			Scheme:   strings.ToLower(header.Get("X-Forwarded-Proto")),
			Host:     host,
			Path:     decoded,
			RawPath:  routed,
			RawQuery: rawQuery,
		},
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          http.NoBody,
		ContentLength: int64(len(body)),
		Host:          host,
		RemoteAddr:    sourceIP,
		RequestURI:    requestURI,
	}
	if len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	ctx = withGatewayContext(ctx, ev.RequestContext.RequestID)
	return httpapi.WithSignedPath(r.WithContext(ctx), signed), nil
}
