package gatewayevent

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
)

// EventOptions say where the API is mounted, for NewEvent.
type EventOptions struct {
	// Stage is the stage name. On the execute-api domain the stage is the
	// first path segment: the client sends /Prod/acct/Tables, the event's
	// path is /acct/Tables and requestContext.path keeps /Prod.
	Stage string
	// BasePath is a custom domain's base path mapping ("tables"): the
	// client sends /tables/acct/Tables and both path and
	// requestContext.path keep it. Empty for the execute-api domain.
	BasePath string
	// Now stamps requestContext.requestTimeEpoch; time.Now when nil.
	Now func() time.Time
}

// NewEvent builds the event API Gateway (a REST API with Lambda proxy
// integration, payload format 1.0, BinaryMediaTypes */*) delivers for r,
// and the function that receives it. r is the request as the client sent
// it: its URL path is the full path, stage or base path included. It fails
// as API Gateway does (403 Missing Authentication Token) when no route
// matches. Tests, the events/ generator and benchmarks use it.
func NewEvent(r *http.Request, opts EventOptions) (events.APIGatewayProxyRequest, deploy.Function, error) {
	full := r.URL.EscapedPath()
	var prefix string
	switch {
	case opts.BasePath != "":
		prefix = "/" + strings.Trim(opts.BasePath, "/")
	case opts.Stage != "":
		prefix = "/" + opts.Stage
	}
	below, ok := cutMount(full, prefix)
	if !ok {
		return events.APIGatewayProxyRequest{}, deploy.Function{}, fmt.Errorf("gatewayevent: %s is not below %s", full, prefix)
	}
	fn, route, params, ok := deploy.RouteFor(r.Method, below)
	if !ok {
		return events.APIGatewayProxyRequest{}, deploy.Function{}, fmt.Errorf("gatewayevent: no route for %s %s (API Gateway answers 403 Missing Authentication Token)", r.Method, below)
	}
	path := below
	if opts.BasePath != "" {
		path = full
	}
	body, err := readBody(r)
	if err != nil {
		return events.APIGatewayProxyRequest{}, deploy.Function{}, err
	}

	sourceIP, host := clientAddr(r)
	mv := make(map[string][]string, len(r.Header)+4)
	for k, vs := range r.Header {
		mv[k] = append([]string(nil), vs...)
	}
	mv["Host"] = []string{host}
	if _, ok := mv["X-Forwarded-Proto"]; !ok {
		mv["X-Forwarded-Proto"] = []string{"https"}
	}
	mv["X-Forwarded-For"] = append(mv["X-Forwarded-For"], sourceIP)
	mv["X-Forwarded-Port"] = []string{"443"}
	single := make(map[string]string, len(mv))
	for k, vs := range mv {
		single[k] = vs[len(vs)-1] // "headers" keeps the last value
	}

	var mq map[string][]string
	var sq map[string]string
	if q := r.URL.Query(); len(q) > 0 {
		mq = map[string][]string(q)
		sq = make(map[string]string, len(q))
		for k, vs := range q {
			sq[k] = vs[len(vs)-1]
		}
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	stage := opts.Stage
	if stage == "" {
		stage = "Prod"
	}
	ev := events.APIGatewayProxyRequest{
		Resource:                        route.Resource,
		Path:                            path,
		HTTPMethod:                      r.Method,
		Headers:                         single,
		MultiValueHeaders:               mv,
		QueryStringParameters:           sq,
		MultiValueQueryStringParameters: mq,
		PathParameters:                  params,
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID:        "123456789012",
			ResourceID:       "tbrsrc",
			Stage:            stage,
			RequestID:        newGatewayRequestID(),
			Identity:         events.APIGatewayRequestIdentity{SourceIP: sourceIP, UserAgent: r.UserAgent()},
			ResourcePath:     route.Resource,
			HTTPMethod:       r.Method,
			APIID:            "tablebridge",
			Path:             full,
			DomainName:       strings.Split(host, ":")[0],
			Protocol:         "HTTP/1.1",
			RequestTimeEpoch: now().UnixMilli(),
		},
	}
	if len(body) > 0 {
		ev.Body = base64.StdEncoding.EncodeToString(body)
		ev.IsBase64Encoded = true
	}
	return ev, fn, nil
}

// cutMount returns the part of the path the client sent (full,
// percent-encoded) below a mount prefix (a stage or base path such as
// "/Prod", or ""): empty or starting with "/". It reports false when full is
// not below prefix.
func cutMount(full, prefix string) (string, bool) {
	below, ok := strings.CutPrefix(full, prefix)
	return below, ok && (below == "" || below[0] == '/')
}

// readBody reads the body of a client's request, nil when it has none.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, fmt.Errorf("gatewayevent: read body: %w", err)
	}
	return b, nil
}

// clientAddr returns what API Gateway reports of a client's request: the
// source IP (r's remote host, a documentation address when r has none) and
// the Host the client sent.
func clientAddr(r *http.Request) (sourceIP, host string) {
	sourceIP = r.RemoteAddr
	if h, _, err := net.SplitHostPort(sourceIP); err == nil {
		sourceIP = h
	}
	if sourceIP == "" {
		sourceIP = "192.0.2.10"
	}
	host = r.Host
	if host == "" {
		host = r.URL.Host
	}
	return sourceIP, host
}

func newGatewayRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ResignEvent signs a stored event again for account with key at now, the
// way the client that produced it signed it (SharedKey or SharedKeyLite,
// over requestContext.path), so a fixture older than Azure's 15-minute
// window authenticates again. It sets x-ms-date and Authorization in both
// headers and multiValueHeaders.
func ResignEvent(ev *events.APIGatewayProxyRequest, account string, key []byte, now time.Time) error {
	full := ev.RequestContext.Path
	if full == "" {
		full = ev.Path
	}
	decoded, err := url.PathUnescape(full)
	if err != nil {
		return fmt.Errorf("gatewayevent: resign: path %q: %w", full, err)
	}
	h := http.Header{}
	for k, vs := range ev.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if len(ev.MultiValueHeaders) == 0 {
		for k, v := range ev.Headers {
			h.Add(k, v)
		}
	}
	date := now.UTC().Format(http.TimeFormat)
	h.Set("x-ms-date", date)
	h.Del("Authorization")
	q := url.Values(ev.MultiValueQueryStringParameters)
	req := &http.Request{Method: ev.HTTPMethod, Header: h, URL: &url.URL{Path: decoded, RawPath: full, RawQuery: q.Encode()}}
	sign := auth.SignSharedKeyLite
	if authz, _ := headerValue(ev, "Authorization"); strings.HasPrefix(authz, "SharedKey ") {
		sign = auth.SignSharedKey
	}
	if err := sign(req, account, key); err != nil {
		return fmt.Errorf("gatewayevent: resign: %w", err)
	}
	setHeader(ev, "x-ms-date", date)
	setHeader(ev, "Authorization", req.Header.Get("Authorization"))
	return nil
}

// headerValue finds a header of the event by case-insensitive name.
func headerValue(ev *events.APIGatewayProxyRequest, name string) (string, bool) {
	for k, vs := range ev.MultiValueHeaders {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[len(vs)-1], true
		}
	}
	for k, v := range ev.Headers {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// setHeader replaces a header in both maps, keeping the key's spelling.
func setHeader(ev *events.APIGatewayProxyRequest, name, value string) {
	if ev.MultiValueHeaders == nil {
		ev.MultiValueHeaders = map[string][]string{}
	}
	if ev.Headers == nil {
		ev.Headers = map[string]string{}
	}
	key := name
	for k := range ev.MultiValueHeaders {
		if strings.EqualFold(k, name) {
			key = k
		}
	}
	ev.MultiValueHeaders[key] = []string{value}
	key = name
	for k := range ev.Headers {
		if strings.EqualFold(k, name) {
			key = k
		}
	}
	ev.Headers[key] = value
}

// MarshalEvent encodes an event as events/ stores it: indented JSON with a
// final newline, map keys sorted, so regenerated fixtures diff cleanly.
func MarshalEvent(ev events.APIGatewayProxyRequest) ([]byte, error) {
	b, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
