package gatewayevent

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/shared/deploy"
)

// Published samples, in aws-lambda-go's events/testdata.
const (
	SampleREST        = "apigw-request.json"
	SampleHTTP        = "apigw-v2-request-no-authorizer.json"
	SampleFunctionURL = "lambda-urls-request.json"
)

// SamplesHTTP are every published HTTP API request sample: the same
// request through each must be served alike.
var SamplesHTTP = []string{
	"apigw-v2-request-no-authorizer.json", "apigw-v2-request-iam.json",
	"apigw-v2-request-jwt-authorizer.json", "apigw-v2-request-lambda-authorizer.json",
}

// Options say how the API is mounted.
type Options struct {
	Profile deploy.Profile
	// Stage is the stage name (REST API, HTTP API; "$default" or empty is
	// an HTTP API's unnamed stage). On the execute-api domain a named
	// stage is the first path segment the client sends.
	Stage string
	// CustomDomain, when set, is the custom domain the client calls, with
	// BasePath its base path mapping (empty for a root mapping).
	CustomDomain string
	BasePath     string
	// RawPathKeepsBasePath makes an HTTP API event keep the custom
	// domain's base path in rawPath (reports differ; the functions must
	// accept both).
	RawPathKeepsBasePath bool
	// Sample overrides the profile's published sample file.
	Sample string
}

// gatewayTimeFormat is how API Gateway writes requestContext.requestTime
// (payload 1.0) and requestContext.time (2.0).
const gatewayTimeFormat = "02/Jan/2006:15:04:05 -0700"

// Execute-api and Function URL domains of the events.
const (
	executeAPIDomain  = "abcdef1234.execute-api.us-east-1.amazonaws.com"
	functionURLDomain = "abcdefghijklmnopqrstuvwxyz012345.lambda-url.us-east-1.on.aws"
)

var sampleDir struct {
	once sync.Once
	dir  string
	err  error
}

// SampleDir is aws-lambda-go's events/testdata at the pinned version.
func SampleDir() (string, error) {
	sampleDir.once.Do(func() {
		root, err := localproc.ModuleRoot()
		if err != nil {
			sampleDir.err = err
			return
		}
		cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-lambda-go")
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			sampleDir.err = fmt.Errorf("gatewayevent: go list aws-lambda-go: %w", err)
			return
		}
		sampleDir.dir = filepath.Join(strings.TrimSpace(string(out)), "events", "testdata")
	})
	return sampleDir.dir, sampleDir.err
}

// sampleFiles caches each published sample's bytes by name: Build reads one
// per event. Each event still decodes its own copy, which Build rewrites.
var sampleFiles sync.Map // name -> func() ([]byte, error)

func loadSample(name string, into any) error {
	read, _ := sampleFiles.LoadOrStore(name, sync.OnceValues(func() ([]byte, error) {
		dir, err := SampleDir()
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("gatewayevent: published sample: %w", err)
		}
		return b, nil
	}))
	b, err := read.(func() ([]byte, error))()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("gatewayevent: %s: %w", name, err)
	}
	return nil
}

// Build returns the event (as JSON) that the function fn receives for r,
// sent by the client to the profile's endpoint. r's URL path is the full
// path the client sent (stage or base path included). It fails as the
// front door would when nothing is routed there.
func Build(r *http.Request, o Options) (payload []byte, fn deploy.Function, err error) {
	switch o.Profile {
	case deploy.ProfileRESTAPI, "":
		return buildREST(r, o)
	case deploy.ProfileHTTPAPI, deploy.ProfileFunctionURL:
		return buildV2(r, o)
	}
	return nil, deploy.Function{}, fmt.Errorf("gatewayevent: unknown profile %q", o.Profile)
}

// MountPrefix is the path the client puts in front of /{account}: the
// stage, the base path, or nothing.
func (o Options) MountPrefix() string {
	switch {
	case o.CustomDomain != "":
		if b := strings.Trim(o.BasePath, "/"); b != "" {
			return "/" + b
		}
		return ""
	case o.Profile == deploy.ProfileFunctionURL:
		return ""
	case o.Stage != "" && o.Stage != "$default":
		return "/" + o.Stage
	}
	return ""
}

func buildREST(r *http.Request, o Options) ([]byte, deploy.Function, error) {
	built, fn, err := NewEvent(r, EventOptions{Stage: o.Stage, BasePath: o.BasePath})
	if err != nil {
		return nil, fn, err
	}
	var ev events.APIGatewayProxyRequest
	name := o.Sample
	if name == "" {
		name = SampleREST
	}
	if err := loadSample(name, &ev); err != nil {
		return nil, fn, err
	}
	// The sample's gateway-added headers (CloudFront, tracing) stay; the
	// client's replace the sample's own.
	mv := map[string][]string{}
	for k, vs := range ev.MultiValueHeaders {
		if addedByGateway(k) {
			mv[k] = vs
		}
	}
	for k, vs := range built.MultiValueHeaders {
		mv[k] = vs
	}
	single := map[string]string{}
	for k, vs := range mv {
		single[k] = vs[len(vs)-1]
	}
	ev.Resource, ev.Path, ev.HTTPMethod = built.Resource, built.Path, built.HTTPMethod
	ev.Headers, ev.MultiValueHeaders = single, mv
	ev.QueryStringParameters, ev.MultiValueQueryStringParameters = built.QueryStringParameters, built.MultiValueQueryStringParameters
	ev.PathParameters = built.PathParameters
	ev.Body, ev.IsBase64Encoded = built.Body, built.IsBase64Encoded
	rc := &ev.RequestContext
	rc.Stage, rc.RequestID, rc.ResourcePath, rc.HTTPMethod = built.RequestContext.Stage, built.RequestContext.RequestID,
		built.RequestContext.ResourcePath, built.RequestContext.HTTPMethod
	rc.Path, rc.Protocol, rc.RequestTimeEpoch = built.RequestContext.Path, "HTTP/1.1", built.RequestContext.RequestTimeEpoch
	rc.RequestTime = time.UnixMilli(rc.RequestTimeEpoch).UTC().Format(gatewayTimeFormat)
	rc.Identity.SourceIP, rc.Identity.UserAgent = built.RequestContext.Identity.SourceIP, built.RequestContext.Identity.UserAgent
	rc.DomainName = executeAPIDomain
	if o.CustomDomain != "" {
		rc.DomainName = o.CustomDomain
	}
	b, err := json.Marshal(ev)
	return b, fn, err
}

func addedByGateway(name string) bool {
	n := strings.ToLower(name)
	return strings.HasPrefix(n, "cloudfront-") || n == "via" || n == "x-amz-cf-id" || n == "x-amzn-trace-id"
}

func buildV2(r *http.Request, o Options) ([]byte, deploy.Function, error) {
	full := r.URL.EscapedPath()
	prefix := o.MountPrefix()
	below, ok := cutMount(full, prefix)
	if !ok || below == "" {
		return nil, deploy.Function{}, fmt.Errorf("gatewayevent: %s is not below %q", full, prefix)
	}
	decodedBelow, err := url.PathUnescape(below)
	if err != nil {
		return nil, deploy.Function{}, fmt.Errorf("gatewayevent: path %q: %w", below, err)
	}
	fn, routeKey, params, ok := deploy.RouteForProfile(o.Profile, r.Method, below)
	if !ok {
		return nil, fn, fmt.Errorf("gatewayevent: no route for %s %s", r.Method, below)
	}
	body, err := readBody(r)
	if err != nil {
		return nil, fn, err
	}

	var ev events.APIGatewayV2HTTPRequest
	name := o.Sample
	switch {
	case name != "":
	case o.Profile == deploy.ProfileFunctionURL:
		name = SampleFunctionURL
	default:
		name = SampleHTTP
	}
	if err := loadSample(name, &ev); err != nil {
		return nil, fn, err
	}
	rc := &ev.RequestContext
	domain := executeAPIDomain
	var rawPath string
	switch {
	case o.Profile == deploy.ProfileFunctionURL:
		// Function URLs pass the path on as sent.
		domain, rawPath = functionURLDomain, full
		ev.RouteKey, rc.RouteKey, rc.Stage = "", "", ""
	case o.CustomDomain != "":
		domain, rawPath = o.CustomDomain, decodedBelow
		if o.RawPathKeepsBasePath {
			rawPath = prefix + decodedBelow
		}
		ev.RouteKey, rc.RouteKey, rc.Stage = routeKey, routeKey, stageName(o.Stage)
	default:
		// HTTP APIs decode the path and keep a named stage in front.
		rawPath = prefix + decodedBelow
		ev.RouteKey, rc.RouteKey, rc.Stage = routeKey, routeKey, stageName(o.Stage)
	}
	ev.RawPath = rawPath
	ev.RawQueryString = r.URL.RawQuery
	ev.QueryStringParameters = nil
	if q := r.URL.Query(); len(q) > 0 {
		ev.QueryStringParameters = map[string]string{}
		for k, vs := range q {
			ev.QueryStringParameters[k] = strings.Join(vs, ",")
		}
	}
	ev.PathParameters = params
	if o.Profile == deploy.ProfileFunctionURL {
		ev.PathParameters = nil
	}

	sourceIP, host := clientAddr(r)
	ev.Headers = map[string]string{}
	ev.Cookies = nil
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		if lk == "cookie" {
			for _, v := range vs {
				for _, c := range strings.Split(v, ";") {
					ev.Cookies = append(ev.Cookies, strings.TrimSpace(c))
				}
			}
			continue
		}
		ev.Headers[lk] = strings.Join(vs, ",")
	}
	ev.Headers["host"] = host
	ev.Headers["content-length"] = fmt.Sprint(len(body))
	// API Gateway appends the source IP to what the client sent.
	if xff := ev.Headers["x-forwarded-for"]; xff != "" {
		ev.Headers["x-forwarded-for"] = xff + ", " + sourceIP
	} else {
		ev.Headers["x-forwarded-for"] = sourceIP
	}
	ev.Headers["x-forwarded-port"] = "443"
	ev.Headers["x-forwarded-proto"] = "https"
	ev.Headers["x-amzn-trace-id"] = "Root=1-5e9f0c65-1de4d666d4dd26aced652b6c"

	now := time.Now()
	rc.DomainName, rc.DomainPrefix = domain, strings.Split(domain, ".")[0]
	rc.HTTP.Method, rc.HTTP.Path, rc.HTTP.Protocol = r.Method, rawPath, "HTTP/1.1"
	rc.HTTP.SourceIP, rc.HTTP.UserAgent = sourceIP, r.UserAgent()
	rc.RequestID = newRequestID()
	rc.Time, rc.TimeEpoch = now.UTC().Format(gatewayTimeFormat), now.UnixMilli()

	ev.Body, ev.IsBase64Encoded = "", false
	if len(body) > 0 {
		if isText(r.Header.Get("Content-Type")) && utf8.Valid(body) {
			ev.Body = string(body)
		} else {
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
		}
	}
	b, err := json.Marshal(ev)
	return b, fn, err
}

func stageName(s string) string {
	if s == "" {
		return "$default"
	}
	return s
}

// isText is how HTTP APIs and Function URLs decide to pass a body as text:
// text/*, JSON and XML media types; anything else arrives base64.
func isText(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "text/") || mt == "application/json" || mt == "application/xml" ||
		strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
