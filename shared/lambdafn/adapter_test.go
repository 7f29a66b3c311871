package lambdafn_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/tablebridge/tablebridge/shared/lambdafn"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// gatewayEvent is an event as API Gateway (REST API, payload 1.0) delivers
// it, written by hand rather than by NewEvent so the adapter is checked
// against the documented shape, not against its own inverse.
func gatewayEvent(method, resource, path, contextPath string) events.APIGatewayProxyRequest {
	return events.APIGatewayProxyRequest{
		Resource:   resource,
		Path:       path,
		HTTPMethod: method,
		MultiValueHeaders: map[string][]string{
			"Host":              {apiHost},
			"X-Forwarded-Proto": {"https"},
		},
		RequestContext: events.APIGatewayProxyRequestContext{
			Stage: stage, RequestID: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef", Path: contextPath,
			ResourcePath: resource, HTTPMethod: method, DomainName: apiHost,
			Identity: events.APIGatewayRequestIdentity{SourceIP: "203.0.113.9"},
		},
	}
}

func TestNewRequestPaths(t *testing.T) {
	const entity = "/devstoreaccount1/t(PartitionKey='a%20b',RowKey='%C3%A9%27%27x')"
	tests := []struct {
		name                  string
		resource, path, cpath string
		wantPath, wantEscaped string
		wantRequestURI        string
	}{
		{
			name:     "execute-api domain: the stage is only in requestContext.path",
			resource: operation.ResourceAny, path: entity, cpath: "/Prod" + entity,
			wantPath: "/devstoreaccount1/t(PartitionKey='a b',RowKey='é''x')", wantEscaped: entity,
			wantRequestURI: "/Prod" + entity,
		},
		{
			name:     "custom domain: the base path is in both paths",
			resource: operation.ResourceTables, path: "/tables/devstoreaccount1/Tables", cpath: "/tables/devstoreaccount1/Tables",
			wantPath: "/devstoreaccount1/Tables", wantEscaped: "/devstoreaccount1/Tables",
			wantRequestURI: "/tables/devstoreaccount1/Tables",
		},
		{
			name:     "service endpoint with the SDKs' trailing slash",
			resource: operation.ResourceAccount, path: "/devstoreaccount1/", cpath: "/Prod/devstoreaccount1/",
			wantPath: "/devstoreaccount1/", wantEscaped: "/devstoreaccount1/",
			wantRequestURI: "/Prod/devstoreaccount1/",
		},
		{
			name:     "hand-written event without requestContext.path",
			resource: "", path: "/devstoreaccount1/Tables", cpath: "",
			wantPath: "/devstoreaccount1/Tables", wantEscaped: "/devstoreaccount1/Tables",
			wantRequestURI: "/devstoreaccount1/Tables",
		},
		{
			name:     "requestContext.path that does not end with path is ignored",
			resource: "", path: "/devstoreaccount1/Tables", cpath: "/elsewhere",
			wantPath: "/devstoreaccount1/Tables", wantEscaped: "/devstoreaccount1/Tables",
			wantRequestURI: "/devstoreaccount1/Tables",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := lambdafn.NewRequest(context.Background(), gatewayEvent(http.MethodGet, tc.resource, tc.path, tc.cpath))
			if err != nil {
				t.Fatal(err)
			}
			if r.URL.Path != tc.wantPath {
				t.Errorf("URL.Path = %q, want %q", r.URL.Path, tc.wantPath)
			}
			if got := r.URL.EscapedPath(); got != tc.wantEscaped {
				t.Errorf("EscapedPath = %q, want %q", got, tc.wantEscaped)
			}
			if r.RequestURI != tc.wantRequestURI {
				t.Errorf("RequestURI = %q, want %q", r.RequestURI, tc.wantRequestURI)
			}
			if r.Host != apiHost || r.URL.Scheme != "https" {
				t.Errorf("host %q scheme %q, want %q https", r.Host, r.URL.Scheme, apiHost)
			}
		})
	}
}

func TestNewRequestRefusesBrokenEvents(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(*events.APIGatewayProxyRequest)
		wantCode string
	}{
		{"no method", func(ev *events.APIGatewayProxyRequest) { ev.HTTPMethod = "" }, "InvalidInput"},
		{"bad percent-encoding in the path", func(ev *events.APIGatewayProxyRequest) {
			ev.Path, ev.RequestContext.Path = "/devstoreaccount1/t%zz", "/Prod/devstoreaccount1/t%zz"
		}, "InvalidUri"},
		{"isBase64Encoded body that is not base64", func(ev *events.APIGatewayProxyRequest) {
			ev.Body, ev.IsBase64Encoded = "not base64!", true
		}, "InvalidInput"},
	}
	fs := newFunctions(t, openBolt(t))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := gatewayEvent(http.MethodGet, operation.ResourceAny, "/devstoreaccount1/t()", "/Prod/devstoreaccount1/t()")
			tc.edit(&ev)
			if _, err := lambdafn.NewRequest(context.Background(), ev); err == nil {
				t.Fatal("NewRequest accepted the event")
			}
			resp := fs.invoke(t, "readresource", ev)
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != tc.wantCode {
				t.Fatalf("got %d %q, want 400 %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.wantCode)
			}
			if body := readAll(t, resp); !strings.Contains(body, `"odata.error"`) || !strings.Contains(body, tc.wantCode) {
				t.Errorf("body %s is not an Azure error", body)
			}
			// httpapi's one error writer answered, with its common headers.
			if resp.Header.Get("x-ms-request-id") == "" || resp.Header.Get("Date") == "" {
				t.Errorf("error without x-ms-request-id or Date: %v", resp.Header)
			}
		})
	}
}

// TestNewRequestQuery: API Gateway hands over query parameters decoded;
// the request must decode back to exactly what the client encoded.
func TestNewRequestQuery(t *testing.T) {
	filters := []struct{ name, filter string }{
		{"quote doubled in a literal", "Name eq 'O''Brien'"},
		{"percent", "Discount eq '100%' and Code eq '%41'"},
		{"plus", "Formula eq 'a+b' and Score gt 1.5E+3"},
		{"spaces", "PartitionKey eq 'two  spaces ' "},
		{"unicode", "City eq 'Zürich' or City eq '東京' or Emoji eq '🦀'"},
		{"ampersand and equals", "Q eq 'a=1&b=2' and R eq '&'"},
		{"hash and question mark", "Tag eq '#1?'"},
	}
	for _, tc := range filters {
		t.Run(tc.name, func(t *testing.T) {
			ev := gatewayEvent(http.MethodGet, operation.ResourceAny, "/devstoreaccount1/t()", "/Prod/devstoreaccount1/t()")
			ev.QueryStringParameters = map[string]string{"$filter": tc.filter, "$top": "5"}
			ev.MultiValueQueryStringParameters = map[string][]string{"$filter": {tc.filter}, "$top": {"5"}}
			r, err := lambdafn.NewRequest(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			q, err := url.ParseQuery(r.URL.RawQuery)
			if err != nil {
				t.Fatalf("RawQuery %q does not parse: %v", r.URL.RawQuery, err)
			}
			if got := q["$filter"]; len(got) != 1 || got[0] != tc.filter {
				t.Errorf("$filter = %q, want %q (RawQuery %q)", got, tc.filter, r.URL.RawQuery)
			}
			if q.Get("$top") != "5" {
				t.Errorf("$top = %q", q.Get("$top"))
			}
			if !strings.HasSuffix(r.RequestURI, "?"+r.URL.RawQuery) {
				t.Errorf("RequestURI %q does not carry the query", r.RequestURI)
			}
		})
	}
	t.Run("repeated parameter keeps every value", func(t *testing.T) {
		ev := gatewayEvent(http.MethodGet, operation.ResourceAny, "/devstoreaccount1/t()", "/Prod/devstoreaccount1/t()")
		ev.MultiValueQueryStringParameters = map[string][]string{"x": {"1", "2"}}
		r, err := lambdafn.NewRequest(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.URL.Query()["x"]; !slices.Equal(got, []string{"1", "2"}) {
			t.Errorf("x = %q", got)
		}
	})
	t.Run("queryStringParameters alone (older tools)", func(t *testing.T) {
		ev := gatewayEvent(http.MethodGet, operation.ResourceAny, "/devstoreaccount1/t()", "/Prod/devstoreaccount1/t()")
		ev.QueryStringParameters = map[string]string{"$filter": "A eq 'x&y'"}
		r, err := lambdafn.NewRequest(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.URL.Query().Get("$filter"); got != "A eq 'x&y'" {
			t.Errorf("$filter = %q", got)
		}
	})
}

// TestNewRequestHeaders: payload 1.0 keeps every header value whole; the
// proxy library's payload 2.0 adapter would split them on commas, which is
// why the API is a REST API (the last subtest shows that split).
func TestNewRequestHeaders(t *testing.T) {
	const (
		date   = "Sun, 11 Oct 2009 21:49:42 GMT"
		etag   = `W/"datetime'2024-12-23T09%3A20%3A10.1623783Z'", W/"datetime'2024-12-23T09%3A20%3A11.0000000Z'"`
		prefer = "return-content, odata.include-annotations=\"*\""
	)
	ev := gatewayEvent(http.MethodPut, operation.ResourceAny, "/devstoreaccount1/t(PartitionKey='a',RowKey='b')", "/Prod/devstoreaccount1/t(PartitionKey='a',RowKey='b')")
	ev.MultiValueHeaders["x-ms-date"] = []string{date}
	ev.MultiValueHeaders["If-Match"] = []string{etag}
	ev.MultiValueHeaders["Prefer"] = []string{prefer}
	ev.MultiValueHeaders["X-Custom"] = []string{"one", "two"}
	ev.MultiValueHeaders["X-Forwarded-For"] = []string{"10.9.8.7, 203.0.113.9"}
	r, err := lambdafn.NewRequest(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"X-Ms-Date": {date}, "If-Match": {etag}, "Prefer": {prefer}, "X-Custom": {"one", "two"},
		// API Gateway's own view of the client, not the spoofable first entry.
		"X-Forwarded-For": {"203.0.113.9"},
	} {
		if got := r.Header.Values(name); !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if r.Header.Get("Host") != "" || r.Host != apiHost {
		t.Errorf("Host belongs in r.Host: header %q, Host %q", r.Header.Get("Host"), r.Host)
	}
	if r.RemoteAddr != "203.0.113.9" {
		t.Errorf("RemoteAddr = %q", r.RemoteAddr)
	}

	t.Run("single-value headers when multiValueHeaders is absent", func(t *testing.T) {
		ev := gatewayEvent(http.MethodGet, operation.ResourceTables, "/devstoreaccount1/Tables", "/Prod/devstoreaccount1/Tables")
		ev.MultiValueHeaders = nil
		ev.Headers = map[string]string{"x-ms-date": date, "Host": apiHost}
		r, err := lambdafn.NewRequest(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Header.Values("x-ms-date"); !slices.Equal(got, []string{date}) {
			t.Errorf("x-ms-date = %q", got)
		}
		if r.Header.Get("X-Forwarded-Proto") != "https" {
			t.Errorf("X-Forwarded-Proto defaults to https, got %q", r.Header.Get("X-Forwarded-Proto"))
		}
	})

	t.Run("payload 2.0: a client-sent X-Forwarded-For cannot spoof the SAS sip check", func(t *testing.T) {
		for _, tc := range []struct{ name, sourceIP, want string }{
			{"source IP given", "203.0.113.9", "203.0.113.9"},
			{"source IP missing", "", ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ev := events.APIGatewayV2HTTPRequest{
					Version: "2.0", RawPath: "/devstoreaccount1/Tables",
					// The client's own entry first, API Gateway's appended:
					// the handler's clientIP reads the first entry.
					Headers: map[string]string{"host": apiHost, "x-forwarded-for": "10.9.8.7, 203.0.113.9"},
					RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: apiHost,
						HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET", SourceIP: tc.sourceIP}},
				}
				r, err := lambdafn.NewRequestV2(context.Background(), ev, "")
				if err != nil {
					t.Fatal(err)
				}
				if got := r.Header.Get("X-Forwarded-For"); got != tc.want {
					t.Errorf("X-Forwarded-For = %q, want %q", got, tc.want)
				}
				if r.RemoteAddr != tc.want {
					t.Errorf("RemoteAddr = %q, want %q", r.RemoteAddr, tc.want)
				}
			})
		}
	})

	t.Run("the payload 2.0 adapter splits on commas (why this is a REST API)", func(t *testing.T) {
		var v2 core.RequestAccessorV2
		r, err := v2.EventToRequest(events.APIGatewayV2HTTPRequest{
			RawPath: "/devstoreaccount1/Tables", Headers: map[string]string{"x-ms-date": date},
			RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "GET"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Header.Values("x-ms-date"); len(got) == 1 && got[0] == date {
			t.Skipf("aws-lambda-go-api-proxy no longer splits header values (%q); payload 2.0 could be reconsidered", got)
		}
	})
}

func TestServeBodiesAreBinarySafe(t *testing.T) {
	binary := []byte{0xff, 0x00, 0xfe, '\r', '\n', 0x80}
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		w.Header().Set("Content-Type", "application/octet-stream")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b[:n])
	})
	tests := []struct {
		name       string
		body       []byte
		wantBase64 bool
	}{
		{"bytes that are not UTF-8 go back base64-encoded", binary, true},
		{"UTF-8 text goes back as text", []byte("--batch_1\r\nContent-Type: application/http\r\n\r\nZürich\r\n"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := gatewayEvent(http.MethodPost, operation.ResourceAny, "/devstoreaccount1/$batch", "/Prod/devstoreaccount1/$batch")
			ev.Body, ev.IsBase64Encoded = base64.StdEncoding.EncodeToString(tc.body), true
			r, err := lambdafn.NewRequest(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			if r.ContentLength != int64(len(tc.body)) {
				t.Errorf("ContentLength = %d, want %d", r.ContentLength, len(tc.body))
			}
			resp := lambdafn.Serve(echo, r)
			if resp.IsBase64Encoded != tc.wantBase64 {
				t.Errorf("isBase64Encoded = %v, want %v", resp.IsBase64Encoded, tc.wantBase64)
			}
			if got := readAll(t, toHTTPResponse(t, resp)); got != string(tc.body) {
				t.Errorf("body came back as %q, want %q", got, tc.body)
			}
		})
	}
	t.Run("a handler that writes nothing is a 500", func(t *testing.T) {
		ev := gatewayEvent(http.MethodGet, operation.ResourceTables, "/devstoreaccount1/Tables", "/Prod/devstoreaccount1/Tables")
		r, err := lambdafn.NewRequest(context.Background(), ev)
		if err != nil {
			t.Fatal(err)
		}
		resp := lambdafn.Serve(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), r)
		if resp.StatusCode != http.StatusInternalServerError || resp.MultiValueHeaders["X-Ms-Error-Code"][0] != "InternalError" {
			t.Errorf("got %d %v", resp.StatusCode, resp.MultiValueHeaders)
		}
	})
}

// FuzzNewRequestQuery: whatever decoded parameters API Gateway hands over,
// the request decodes them back unchanged, and no path or header makes the
// adapter panic.
func FuzzNewRequestQuery(f *testing.F) {
	f.Add("$filter", "Name eq 'O''Brien' and Q eq 'a=1&b=2+3%'", "/devstoreaccount1/t()", "Sun, 11 Oct 2009 21:49:42 GMT")
	f.Add("NextPartitionKey", "1!8!cDE-", "/devstoreaccount1/t(PartitionKey='%41',RowKey='')", "")
	f.Add("", "", "/", "x")
	f.Fuzz(func(t *testing.T, key, value, path, header string) {
		ev := gatewayEvent(http.MethodGet, operation.ResourceAny, path, "/Prod"+path)
		ev.MultiValueQueryStringParameters = map[string][]string{key: {value, value + "2"}}
		ev.MultiValueHeaders["X-Test"] = []string{header}
		r, err := lambdafn.NewRequest(context.Background(), ev)
		if err != nil {
			return // an undecodable path is refused, not served
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			t.Fatalf("RawQuery %q does not parse: %v", r.URL.RawQuery, err)
		}
		if got := q[key]; !slices.Equal(got, []string{value, value + "2"}) {
			t.Fatalf("%q = %q, want %q", key, got, []string{value, value + "2"})
		}
		if got := r.Header.Values("X-Test"); !slices.Equal(got, []string{header}) {
			t.Fatalf("X-Test = %q, want %q", got, header)
		}
	})
}
