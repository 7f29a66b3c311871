package lambdafn

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// envelope holds the fields of both payload formats, so an event is
// decoded in one pass whatever its format (a $batch body may be megabytes)
// and then split into the format's own type. Only the small request
// context is decoded twice: once raw, then as its format's type.
type envelope struct {
	Version string `json:"version"`
	// Payload format 1.0.
	Resource                        string              `json:"resource"`
	Path                            string              `json:"path"`
	HTTPMethod                      string              `json:"httpMethod"`
	MultiValueHeaders               map[string][]string `json:"multiValueHeaders"`
	MultiValueQueryStringParameters map[string][]string `json:"multiValueQueryStringParameters"`
	// Payload format 2.0.
	RouteKey       string   `json:"routeKey"`
	RawPath        string   `json:"rawPath"`
	RawQueryString string   `json:"rawQueryString"`
	Cookies        []string `json:"cookies"`
	// Both.
	Headers               map[string]string `json:"headers"`
	QueryStringParameters map[string]string `json:"queryStringParameters"`
	PathParameters        map[string]string `json:"pathParameters"`
	StageVariables        map[string]string `json:"stageVariables"`
	RequestContext        json.RawMessage   `json:"requestContext"`
	Body                  string            `json:"body"`
	IsBase64Encoded       bool              `json:"isBase64Encoded"`
}

// event is a decoded event: exactly one of v1 and v2 is set.
type event struct {
	v1 *events.APIGatewayProxyRequest
	v2 *events.APIGatewayV2HTTPRequest
	// httpAPI marks a format 1.0 event from an HTTP API (version "1.0").
	httpAPI bool
}

// decodeEvent tells the payload formats apart by their version field:
// "2.0" for HTTP APIs and Function URLs of format 2.0, "1.0" for HTTP APIs
// of format 1.0, none for REST APIs (whose events predate the field).
func decodeEvent(payload []byte) (event, error) {
	var e envelope
	if err := json.Unmarshal(payload, &e); err != nil {
		return event{}, apierr.Newf(apierr.InvalidInput, "The event is not an API Gateway or Function URL event: %v.", err)
	}
	if e.Version == "2.0" {
		ev := &events.APIGatewayV2HTTPRequest{
			Version: e.Version, RouteKey: e.RouteKey, RawPath: e.RawPath, RawQueryString: e.RawQueryString,
			Cookies: e.Cookies, Headers: e.Headers, QueryStringParameters: e.QueryStringParameters,
			PathParameters: e.PathParameters, StageVariables: e.StageVariables, Body: e.Body, IsBase64Encoded: e.IsBase64Encoded,
		}
		if err := unmarshalContext(e.RequestContext, &ev.RequestContext); err != nil {
			return event{}, err
		}
		return event{v2: ev}, nil
	}
	ev := &events.APIGatewayProxyRequest{
		Resource: e.Resource, Path: e.Path, HTTPMethod: e.HTTPMethod, Headers: e.Headers, MultiValueHeaders: e.MultiValueHeaders,
		QueryStringParameters: e.QueryStringParameters, MultiValueQueryStringParameters: e.MultiValueQueryStringParameters,
		PathParameters: e.PathParameters, StageVariables: e.StageVariables, Body: e.Body, IsBase64Encoded: e.IsBase64Encoded,
	}
	if err := unmarshalContext(e.RequestContext, &ev.RequestContext); err != nil {
		return event{}, err
	}
	return event{v1: ev, httpAPI: e.Version == "1.0"}, nil
}

func unmarshalContext(raw json.RawMessage, into any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return apierr.Newf(apierr.InvalidInput, "The event's requestContext is not an API Gateway request context: %v.", err)
	}
	return nil
}

// v2Response is the payload format 2.0 response (HTTP API, Function URL):
// one value per header name, repeated values joined with commas, and
// Set-Cookie values in cookies, as the format has no multi-value headers.
type v2Response struct {
	StatusCode      int               `json:"statusCode"`
	Headers         map[string]string `json:"headers"`
	Cookies         []string          `json:"cookies,omitempty"`
	Body            string            `json:"body"`
	IsBase64Encoded bool              `json:"isBase64Encoded"`
}

// toV2Response converts the handler's answer to format 2.0. The header
// values httpapi repeats are lists (Vary, Access-Control-Expose-Headers),
// for which a comma-joined value means the same (RFC 9110, 5.3).
func toV2Response(r events.APIGatewayProxyResponse) v2Response {
	out := v2Response{StatusCode: r.StatusCode, Headers: make(map[string]string, len(r.MultiValueHeaders)+len(r.Headers)),
		Body: r.Body, IsBase64Encoded: r.IsBase64Encoded}
	for k, v := range r.Headers {
		out.Headers[k] = v
	}
	for k, vs := range r.MultiValueHeaders {
		if http.CanonicalHeaderKey(k) == "Set-Cookie" {
			out.Cookies = append(out.Cookies, vs...)
			continue
		}
		out.Headers[k] = strings.Join(vs, ", ")
	}
	return out
}

// newRequestV2 turns a payload format 2.0 event (HTTP API or Function URL)
// into the request the client sent. basePath is the custom domain's base
// path mapping, if the API has one.
//
//   - Headers: one value per name, repeated headers joined with commas by
//     API Gateway. Each value is taken whole, never split on commas (which
//     aws-lambda-go-api-proxy's 2.0 adapter does, breaking x-ms-date and
//     with it every Shared Key signature). Cookies come back as one Cookie
//     header.
//   - Path: a Function URL delivers rawPath percent-encoded as sent. An
//     HTTP API delivers it decoded (a "%" in a key arrives bare), so the
//     client's spelling of odd characters is lost: the handler routes on the
//     decoded path, and the signature is checked against the spellings the
//     SDKs use that decode to it (httpapi.WithDecodedPath).
//   - Signed path: an HTTP API keeps a named stage in rawPath
//     ("/prod/acct/Tables") but not the $default stage; behind a custom
//     domain the client signed the base path instead, which rawPath does
//     not carry, so it comes from the configuration (basePath). The part
//     below is what the route matched.
//   - Query: rawQueryString is the query as sent.
func newRequestV2(ctx context.Context, ev events.APIGatewayV2HTTPRequest, basePath string) (*http.Request, error) {
	method := strings.ToUpper(ev.RequestContext.HTTP.Method)
	if method == "" {
		return nil, apierr.Newf(apierr.InvalidInput, "The event has no requestContext.http.method; it is not an HTTP API or Function URL event.")
	}
	raw := ev.RawPath
	if raw == "" {
		raw = "/"
	}
	functionURL := strings.Contains(ev.RequestContext.DomainName, ".lambda-url.")
	var decoded, escaped string
	pathDecoded := !functionURL || pathIsDecoded(raw)
	if !pathDecoded {
		// pathIsDecoded found every "%" followed by two hex digits, so
		// unescaping cannot fail.
		decoded, _ = url.PathUnescape(raw)
		escaped = raw
	} else {
		decoded, escaped = raw, escapeDecodedPath(raw)
	}

	// What lies in front of the part the route matched: a named stage, and
	// on a custom domain possibly the base path (reports differ on whether
	// HTTP APIs keep it in rawPath; either is accepted).
	customDomain := !functionURL && ev.RequestContext.DomainName != "" &&
		!strings.Contains(ev.RequestContext.DomainName, ".execute-api.")
	basePath = strings.Trim(basePath, "/")
	prefixSegments := 0
	if customDomain && basePath != "" && hasSegmentPrefix(decoded[prefixLen(decoded, prefixSegments):], basePath) {
		prefixSegments += strings.Count(basePath, "/") + 1
	}
	if stage := ev.RequestContext.Stage; stage != "" && stage != "$default" && !functionURL &&
		hasSegmentPrefix(decoded[prefixLen(decoded, prefixSegments):], stage) {
		prefixSegments++
	}
	stagePrefix, routedDecoded := cutSegments(decoded, prefixSegments)
	_, routedEscaped := cutSegments(escaped, prefixSegments)
	signed := stagePrefix + routedEscaped
	if customDomain {
		// The client signed the path it sent: base path, then the route.
		signed = routedEscaped
		if basePath != "" {
			signed = "/" + basePath + routedEscaped
		}
	}

	rawQuery := ev.RawQueryString
	if _, err := url.ParseQuery(rawQuery); err != nil {
		return nil, apierr.Newf(apierr.InvalidQueryParameterValue, "The query string %q is not validly encoded.", rawQuery)
	}

	header := make(http.Header, len(ev.Headers)+3)
	for k, v := range ev.Headers {
		header[http.CanonicalHeaderKey(k)] = []string{v}
	}
	if len(ev.Cookies) > 0 {
		header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	body, err := eventBody(ev.Body, ev.IsBase64Encoded)
	if err != nil {
		return nil, err
	}
	return assemble(ctx, wireRequest{
		method: method, path: routedDecoded, escapedPath: routedEscaped, signedPath: signed, rawQuery: rawQuery,
		header: header, domainName: ev.RequestContext.DomainName, sourceIP: ev.RequestContext.HTTP.SourceIP,
		body: body, gatewayRequestID: ev.RequestContext.RequestID, pathDecoded: pathDecoded,
	}), nil
}

// cutSegments splits the first n segments off p ("/prod/acct/t", 1 gives
// "/prod" and "/acct/t").
func cutSegments(p string, n int) (prefix, rest string) {
	i := 0
	for range n {
		j := strings.IndexByte(p[i+1:], '/')
		if j < 0 {
			return p, "/"
		}
		i += 1 + j
	}
	return p[:i], p[i:]
}

// prefixLen is the length of the first n segments of p.
func prefixLen(p string, n int) int {
	prefix, _ := cutSegments(p, n)
	return len(prefix)
}

// hasSegmentPrefix reports whether p starts with the whole segments of
// prefix ("/prod/acct" starts with "prod", "/product" does not).
func hasSegmentPrefix(p, prefix string) bool {
	rest, ok := strings.CutPrefix(p, "/"+prefix)
	return ok && (rest == "" || rest[0] == '/')
}
