package protocoltest

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// suiteCORS covers "CORS support for the Azure Storage services" and
// "Preflight Table Request": the rules come from the service properties
// (set through the SDK), are evaluated in order, the first rule allowing
// origin, method and every requested header wins, a preflight no rule
// allows is 403 CorsPreflightFailure, and an actual cross-origin request
// carries the matching rule's headers, or none when no rule matches.
func suiteCORS(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	c := newTable(t, sc, "cors")
	table := TableName(t, "cors")
	addEntity(t, c, `{"PartitionKey":"p","RowKey":"r"}`)

	const app, other, evil = "http://app.example", "http://other.example:8080", "http://evil.example"
	setRules := func(t *testing.T, rules ...*aztables.CorsRule) {
		t.Helper()
		if _, err := sc.SetProperties(ctxFor(t), aztables.ServiceProperties{Cors: rules}, nil); err != nil {
			t.Fatalf("SetProperties: %v", err)
		}
	}
	setRules(t,
		&aztables.CorsRule{AllowedOrigins: to.Ptr(app), AllowedMethods: to.Ptr("GET,PUT,POST"),
			AllowedHeaders: to.Ptr("x-ms-meta-*,x-ms-version,content-type"), ExposedHeaders: to.Ptr("x-ms-request-id,etag"), MaxAgeInSeconds: to.Ptr(int32(300))},
		&aztables.CorsRule{AllowedOrigins: to.Ptr(other), AllowedMethods: to.Ptr("GET"),
			AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr("x-ms-version"), MaxAgeInSeconds: to.Ptr(int32(60))},
	)

	// preflight sends what a browser sends: no signature and none of the
	// SDK's headers, only Origin and the Access-Control-Request-* pair.
	preflight := func(t *testing.T, s *Server, account, path, origin, method, headers string) *Response {
		t.Helper()
		h := http.Header{"x-ms-version": nil, "DataServiceVersion": nil, "Accept": nil, "x-ms-date": nil}
		if origin != "" {
			h.Set("Origin", origin)
		}
		if method != "" {
			h.Set("Access-Control-Request-Method", method)
		}
		if headers != "" {
			h.Set("Access-Control-Request-Headers", headers)
		}
		return s.Do(t, Request{Method: http.MethodOptions, Account: account, Path: path, Header: h, Signing: Unsigned})
	}
	noCORSHeaders := func(t *testing.T, resp *Response) {
		t.Helper()
		for k := range resp.Header {
			if strings.HasPrefix(strings.ToLower(k), "access-control-") {
				t.Errorf("response carries %s: %q", k, resp.Header.Get(k))
			}
		}
	}

	t.Run("PreflightAllowed", func(t *testing.T) {
		for _, tc := range []struct {
			name, path, origin, method, headers string
			maxAge                              int
		}{
			{"FirstRule", "/" + table, app, "PUT", "x-ms-meta-color,Content-Type,x-ms-version", 300},
			{"FirstRuleNoHeaders", entityPath(table, "p", "r"), app, "GET", "", 300},
			{"SecondRuleAnyHeader", entityPath(table, "p", "r"), other, "GET", "x-anything,x-ms-client-request-id", 60},
			{"ServiceRoot", "/", app, "POST", "content-type", 300},
			{"ResourceNeedNotExist", "/Nosuchtable()", app, "GET", "", 300},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp := preflight(t, srv, "", tc.path, tc.origin, tc.method, tc.headers)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("got %d %s, want 200", resp.StatusCode, truncate(resp.Body))
				}
				commonHeaders(t, resp)
				if got := resp.Header.Get("Access-Control-Allow-Origin"); got != tc.origin {
					t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tc.origin)
				}
				if got := resp.Header.Get("Access-Control-Allow-Methods"); !listContains(got, tc.method) {
					t.Errorf("Access-Control-Allow-Methods %q lacks %s", got, tc.method)
				}
				for _, h := range strings.Split(tc.headers, ",") {
					if got := resp.Header.Get("Access-Control-Allow-Headers"); h != "" && !listContains(got, h) {
						t.Errorf("Access-Control-Allow-Headers %q lacks %s", got, h)
					}
				}
				if got := resp.Header.Get("Access-Control-Max-Age"); got != strconv.Itoa(tc.maxAge) {
					t.Errorf("Access-Control-Max-Age %q, want %d", got, tc.maxAge)
				}
				// Azure: credentials are allowed when the rule names its
				// origins rather than "*".
				if got := resp.Header.Get("Access-Control-Allow-Credentials"); got != "true" {
					t.Errorf("Access-Control-Allow-Credentials %q, want true", got)
				}
			})
		}
	})

	t.Run("PreflightRefused", func(t *testing.T) {
		for _, tc := range []struct{ name, origin, method, headers string }{
			{"UnknownOrigin", evil, "GET", ""},
			{"OriginWithOtherPort", "http://app.example:81", "GET", ""},
			{"MethodOfNoRule", app, "DELETE", ""},
			{"MethodOnlyOtherOriginsMay", other, "PUT", ""},
			{"HeaderOfNoRule", app, "PUT", "x-ms-meta-color,x-custom"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp := preflight(t, srv, "", "/"+table, tc.origin, tc.method, tc.headers)
				wantCode(t, resp, http.StatusForbidden, "CorsPreflightFailure")
				noCORSHeaders(t, resp)
			})
		}
	})

	t.Run("PreflightMalformed", func(t *testing.T) {
		// Both headers are required ("Preflight Table Request").
		for _, tc := range []struct{ name, origin, method string }{
			{"NoOrigin", "", "GET"},
			{"NoRequestMethod", app, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp := preflight(t, srv, "", "/"+table, tc.origin, tc.method, "")
				if resp.StatusCode != http.StatusBadRequest {
					t.Errorf("got %d %s, want 400", resp.StatusCode, truncate(resp.Body))
				}
				noCORSHeaders(t, resp)
			})
		}
	})

	t.Run("ActualRequests", func(t *testing.T) {
		get := func(t *testing.T, origin string) *Response {
			t.Helper()
			h := http.Header{}
			if origin != "" {
				h.Set("Origin", origin)
			}
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "p", "r"), Header: h})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET from %q: %d %s", origin, resp.StatusCode, truncate(resp.Body))
			}
			return resp
		}
		t.Run("FirstRule", func(t *testing.T) {
			resp := get(t, app)
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != app {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, app)
			}
			exposed := resp.Header.Get("Access-Control-Expose-Headers")
			for _, h := range []string{"x-ms-request-id", "etag"} {
				if !listContains(exposed, h) {
					t.Errorf("Access-Control-Expose-Headers %q lacks %s", exposed, h)
				}
			}
		})
		t.Run("SecondRule", func(t *testing.T) {
			resp := get(t, other)
			if got := resp.Header.Get("Access-Control-Allow-Origin"); got != other {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, other)
			}
			if got := resp.Header.Get("Access-Control-Expose-Headers"); !listContains(got, "x-ms-version") {
				t.Errorf("Access-Control-Expose-Headers %q lacks x-ms-version", got)
			}
		})
		t.Run("NoMatchingOrigin", func(t *testing.T) { noCORSHeaders(t, get(t, evil)) })
		t.Run("NoOrigin", func(t *testing.T) { noCORSHeaders(t, get(t, "")) })
		t.Run("Errors", func(t *testing.T) {
			// A browser app can only read an error's code when the error
			// carries the CORS headers too: an unsigned request (403), a
			// verb the resource does not take (405) and a malformed URL
			// (400) are answered with the matching rule's headers.
			for _, r := range []Request{
				{Method: http.MethodGet, Path: entityPath(table, "p", "r"), Signing: Unsigned},
				{Method: http.MethodPost, Path: "/Tables('" + table + "')"},
				{Method: http.MethodGet, Path: "/" + table + "(PartitionKey='p')"},
			} {
				r.Header = http.Header{"Origin": {app}}
				resp := srv.Do(t, r)
				if resp.StatusCode < 400 {
					t.Fatalf("%s %s: %d, want an error", r.Method, r.Path, resp.StatusCode)
				}
				if got := resp.Header.Get("Access-Control-Allow-Origin"); got != app {
					t.Errorf("%s %s: %d with Access-Control-Allow-Origin %q, want %q", r.Method, r.Path, resp.StatusCode, got, app)
				}
			}
		})
		t.Run("MethodOfNoRule", func(t *testing.T) {
			// CORS is not authorization: a signed PUT from an origin whose
			// rule allows only GET is served, just without CORS headers.
			resp := srv.Do(t, Request{Method: http.MethodPut, Path: entityPath(table, "p", "put"), Body: []byte(`{"V":1}`),
				Header: http.Header{"Origin": {other}}})
			if resp.StatusCode != http.StatusNoContent {
				t.Errorf("PUT: %d %s, want 204", resp.StatusCode, truncate(resp.Body))
			}
			noCORSHeaders(t, resp)
		})
	})

	t.Run("AccountWithoutRules", func(t *testing.T) {
		// Rules belong to an account: another account on the same store
		// has none, so every preflight fails.
		bare := auth.Account{Name: "corslessacct", Keys: [][]byte{randomKey(t)}}
		srv2 := New(t, tablebridgetest.WithStore(srv.Store), tablebridgetest.WithAccounts(bare))
		wantCode(t, preflight(t, srv2, bare.Name, "/Tables", app, "GET", ""), http.StatusForbidden, "CorsPreflightFailure")
		if resp := preflight(t, srv2, "", "/Tables", app, "GET", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("devstoreaccount1 on the second handler: %d, want 200 from the stored rules", resp.StatusCode)
		}
	})

	t.Run("NewRulesApplyAtOnce", func(t *testing.T) {
		// Azure allows up to 30 s for new rules to apply; a single server
		// applies them to the next request.
		const fresh = "https://fresh.example"
		setRules(t, &aztables.CorsRule{AllowedOrigins: to.Ptr(fresh), AllowedMethods: to.Ptr("GET"),
			AllowedHeaders: to.Ptr(""), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr(int32(10))})
		wantCode(t, preflight(t, srv, "", "/"+table, app, "GET", ""), http.StatusForbidden, "CorsPreflightFailure")
		if resp := preflight(t, srv, "", "/"+table, fresh, "GET", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("preflight from the new rule's origin: %d %s", resp.StatusCode, truncate(resp.Body))
		}

		// An empty <Cors/> removes every rule. aztables leaves an empty
		// rule list out of the document, so this is raw.
		resp := srv.Do(t, Request{Method: http.MethodPut, Path: "/", RawQuery: "restype=service&comp=properties",
			Body:   []byte(`<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors/></StorageServiceProperties>`),
			Header: http.Header{"Content-Type": {"application/xml"}}})
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("clear CORS rules: %d %s, want 202", resp.StatusCode, truncate(resp.Body))
		}
		wantCode(t, preflight(t, srv, "", "/"+table, fresh, "GET", ""), http.StatusForbidden, "CorsPreflightFailure")
		props, err := sc.GetProperties(ctxFor(t), nil)
		if err != nil || len(props.Cors) != 0 {
			t.Errorf("after clearing: %d rules, err %v", len(props.Cors), err)
		}
	})
}

// listContains reports whether a comma-separated header value holds v,
// ignoring case and spaces.
func listContains(list, v string) bool {
	for _, item := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(item), strings.TrimSpace(v)) {
			return true
		}
	}
	return false
}
