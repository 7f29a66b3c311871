package lambdafn

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/stack"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Handler is one Lambda function: API Gateway and Function URL events
// (payload format 1.0 or 2.0) in, responses of the same format out, served by the
// REST API handler over a store that lets the function reach only its own
// operations.
type Handler struct {
	http *httpapi.Handler
	log  *slog.Logger
	// basePath is a custom domain's base path mapping, which an HTTP API
	// event does not carry but the client signed (see newRequestV2).
	basePath string
}

// Options configure a function's Handler.
type Options struct {
	// HTTP configures the REST API handler. NewHandler turns
	// TrustForwardedHeaders on, because API Gateway terminates TLS and
	// newRequestV1 sets X-Forwarded-Proto and X-Forwarded-For from what API
	// Gateway saw. Query answers are counted as they travel in the proxy
	// response (envelopeCost) against answerBudget unless HTTP sets a
	// smaller budget, so no answer exceeds Lambda's response limit.
	HTTP httpapi.Options
	// BasePath is the custom domain's base path mapping ("tables"), which
	// an HTTP API event leaves out of rawPath but the client signed; empty
	// when the API has no custom domain or maps it at the root.
	BasePath string
}

// NewHandler builds fn's handler over st for accounts: the stack
// (shared/stack) over a store that lets the function reach only its own
// operations.
func NewHandler(fn deploy.Function, st store.Store, accounts []auth.Account, opts Options) (*Handler, error) {
	if st == nil {
		return nil, fmt.Errorf("lambdafn: %s: nil store", fn.Name)
	}
	httpOpts := opts.HTTP
	httpOpts.TrustForwardedHeaders = true
	httpOpts.AnswerCost = envelopeCost
	if httpOpts.AnswerBudget <= 0 || httpOpts.AnswerBudget > answerBudget {
		httpOpts.AnswerBudget = answerBudget
	}
	h, err := stack.New(newGuardStore(st, fn), accounts, httpOpts)
	if err != nil {
		return nil, fmt.Errorf("lambdafn: %s: %w", fn.Name, err)
	}
	log := httpOpts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Handler{http: h, log: log, basePath: opts.BasePath}, nil
}

// Invoke serves one event of either payload format, as the Lambda runtime
// hands it over (lambda.Handler): a REST API event (payload format 1.0,
// multiValueHeaders), an HTTP API event of format 1.0 or 2.0, or a Function
// URL event (format 2.0). The answer is in the format of the event: 1.0
// gets statusCode, multiValueHeaders and body; 2.0 gets statusCode,
// headers (repeated values joined with commas), cookies and body. It
// returns an error only when the answer cannot be encoded: an error makes
// API Gateway answer 502 with a body no Azure SDK understands, so even an
// event that cannot become a request gets an Azure-shaped 400.
func (h *Handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	ev, err := decodeEvent(payload)
	if err != nil {
		return json.Marshal(h.refuseV1(ctx, "", err))
	}
	ctx, cancel := context.WithDeadline(ctx, requestDeadline(ctx, time.Now(), ev.receivedAt()))
	defer cancel()
	if ev.v2 != nil {
		return json.Marshal(h.serveV2(ctx, *ev.v2))
	}
	return json.Marshal(h.serveV1(ctx, *ev.v1, ev.httpAPI))
}

// serveV1 serves a payload format 1.0 event: a REST API's, or with
// httpAPI an HTTP API's, whose path arrives decoded.
func (h *Handler) serveV1(ctx context.Context, ev events.APIGatewayProxyRequest, httpAPI bool) events.APIGatewayProxyResponse {
	ctx = withCapacityMeter(ctx)
	r, err := newRequestV1(ctx, ev, httpAPI)
	if err != nil {
		return h.refuseV1(ctx, ev.Path, err)
	}
	return serveHTTP(h.http, r)
}

// serveV2 serves a payload format 2.0 event (HTTP API, Function URL).
func (h *Handler) serveV2(ctx context.Context, ev events.APIGatewayV2HTTPRequest) v2Response {
	ctx = withCapacityMeter(ctx)
	r, err := newRequestV2(ctx, ev, h.basePath)
	if err != nil {
		return toV2Response(h.refuseV1(ctx, ev.RawPath, err))
	}
	return toV2Response(serveHTTP(h.http, r))
}

// refuseV1 answers an event that cannot become a request through the REST
// handler's error writer, with a placeholder request, so the client still
// gets a code it knows. The logger already names the function.
func (h *Handler) refuseV1(ctx context.Context, path string, err error) events.APIGatewayProxyResponse {
	h.log.LogAttrs(ctx, slog.LevelWarn, "unusable API Gateway event", slog.String("path", path), slog.String("err", err.Error()))
	placeholder, _ := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	return serveHTTP(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.http.ServeError(w, r, err) }), placeholder)
}

// serveHTTP runs r through handler and returns what API Gateway expects back
// for payload format 1.0: the status, every header with all its values
// (multiValueHeaders, so a value holding a comma stays one value; headers
// is an empty map, never null), and the body, base64-encoded
// (isBase64Encoded) unless it is valid UTF-8. The REST API's
// BinaryMediaTypes are */*, so API Gateway decodes a base64 body back to
// the exact bytes.
func serveHTTP(handler http.Handler, r *http.Request) events.APIGatewayProxyResponse {
	w := core.NewProxyResponseWriter()
	handler.ServeHTTP(w, r)
	resp, err := w.GetProxyResponse()
	if err != nil {
		// The handler wrote nothing at all, which httpapi never does.
		resp = events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError,
			MultiValueHeaders: map[string][]string{"X-Ms-Error-Code": {string(apierr.InternalError)}}}
	}
	if resp.Headers == nil {
		resp.Headers = map[string]string{}
	}
	return resp
}

// newRequestV1 turns an API Gateway REST API proxy event into the request the
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
//
// pathDecoded is for an HTTP API event of format 1.0, whose path arrives
// decoded.
func newRequestV1(ctx context.Context, ev events.APIGatewayProxyRequest, pathDecoded bool) (*http.Request, error) {
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
	if pathDecoded {
		// An HTTP API event of format 1.0 delivers the path decoded: the
		// client's spelling is lost, so the escaped form is Go's and the
		// verifier also tries the SDKs' spellings (WithDecodedPath).
		decoded, err = routed, nil
		escaped := escapeDecodedPath(routed)
		signed = strings.TrimSuffix(signed, routed) + escaped
		routed = escaped
	}
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
	body, err := eventBody(ev.Body, ev.IsBase64Encoded)
	if err != nil {
		return nil, err
	}
	return assemble(ctx, wireRequest{
		method: method, path: decoded, escapedPath: routed, signedPath: signed, rawQuery: rawQuery,
		header: header, domainName: ev.RequestContext.DomainName, sourceIP: ev.RequestContext.Identity.SourceIP,
		body: body, gatewayRequestID: ev.RequestContext.RequestID, pathDecoded: pathDecoded,
	}), nil
}

// wireRequest is what an event of either format says about the request.
type wireRequest struct {
	method string
	// path is decoded, escapedPath the same path percent-encoded: both
	// below the stage or base path, as the handler routes on them.
	path, escapedPath string
	// signedPath is what the client signed, percent-encoded.
	signedPath       string
	rawQuery         string
	header           http.Header
	domainName       string
	sourceIP         string
	body             []byte
	gatewayRequestID string
	// pathDecoded says the event delivered the path decoded (HTTP API).
	pathDecoded bool
}

// assemble builds the http.Request the handler serves. The Host header
// wins over the event's domain name; X-Forwarded-For becomes the source IP
// API Gateway saw (none when the event lacks it), and X-Forwarded-Proto
// defaults to https.
func assemble(ctx context.Context, w wireRequest) *http.Request {
	header := w.header
	host := header.Get("Host")
	header.Del("Host")
	if host == "" {
		host = w.domainName
	}
	if header.Get("X-Forwarded-Proto") == "" {
		header.Set("X-Forwarded-Proto", "https")
	}
	// Only API Gateway's view of the client counts: a client-sent
	// X-Forwarded-For would otherwise pass a SAS sip check, also in an
	// event that lacks the source IP.
	header.Del("X-Forwarded-For")
	if w.sourceIP != "" {
		header.Set("X-Forwarded-For", w.sourceIP)
	}
	requestURI := w.signedPath
	if w.rawQuery != "" {
		requestURI += "?" + w.rawQuery
	}
	rawPath := w.escapedPath
	if rawPath == w.path {
		rawPath = ""
	}
	r := &http.Request{
		Method: w.method,
		URL: &url.URL{
			Scheme:   strings.ToLower(header.Get("X-Forwarded-Proto")),
			Host:     host,
			Path:     w.path,
			RawPath:  rawPath,
			RawQuery: w.rawQuery,
		},
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        header,
		Body:          http.NoBody,
		ContentLength: int64(len(w.body)),
		Host:          host,
		RemoteAddr:    w.sourceIP,
		RequestURI:    requestURI,
	}
	if body := w.body; len(body) > 0 {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	ctx = withGatewayContext(ctx, w.gatewayRequestID)
	r = httpapi.WithSignedPath(r.WithContext(ctx), w.signedPath)
	if w.pathDecoded {
		r = httpapi.WithDecodedPath(r)
	}
	return r
}

// pathIsDecoded reports whether a path from an event cannot be the
// percent-encoded wire path: a bare "%", a space, a control or non-ASCII
// byte. HTTP APIs deliver paths decoded; REST APIs and Function URLs do not.
func pathIsDecoded(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c <= ' ' || c >= 0x7f || c == '"':
			return true
		case c == '%':
			if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
				return true
			}
		}
	}
	return false
}

// escapeDecodedPath percent-encodes a path an HTTP API delivered decoded,
// the way Go escapes it; the client's own spelling is lost.
func escapeDecodedPath(p string) string { return (&url.URL{Path: p}).EscapedPath() }

// eventBody is the request body an event carries, base64-decoded when the
// event says so.
func eventBody(body string, isBase64 bool) ([]byte, error) {
	if !isBase64 {
		return []byte(body), nil
	}
	b, err := base64.StdEncoding.DecodeString(body)
	if err != nil {
		return nil, apierr.Newf(apierr.InvalidInput, "The event body is marked isBase64Encoded but is not base64: %v.", err)
	}
	return b, nil
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
