package lambdafn_test

import (
	"net/http"
	"testing"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/internal/testissuer"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/oauth"
)

// TestAnonymousRequestsEveryFrontDoor: through every event shape the
// functions accept (REST API 1.0, HTTP API 2.0, Function URL 2.0), a
// request without credentials gets Azure's 401 NoAuthenticationInformation
// and the challenge of the configured issuer when the functions take
// bearer tokens (the Java SDK's recording
// TableAsyncClientTest.createTableWithMultipleTenants,
// Azure/azure-sdk-for-java sdk/tables/azure-data-tables/src/test/resources/session-records),
// with the headers of Azure's answer, and 403 AuthenticationFailed without
// a challenge when they take keys and SAS only. A CORS preflight is
// answered from the CORS rules as before.
func TestAnonymousRequestsEveryFrontDoor(t *testing.T) {
	iss := testissuer.New(t, testissuer.NewKey(t, jose.RS256))
	v, err := oauth.NewVerified(&oauth.Config{Issuers: []string{iss.URL}, Audiences: []string{"api://tablebridge"},
		Roles: []oauth.Assignment{{Claim: "oid", Value: "writer", Role: "contributor", Account: devAccount}}}, oauth.VerifiedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Discover(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := openBolt(t)
	withTokens, keysOnly := newFunctionsWithTokens(t, st, v), newFunctions(t, st)
	challenge := "Bearer authorization_uri=" + iss.URL + " resource_id=api://tablebridge"
	doors := []struct {
		name   string
		o      gatewayevent.Options
		prefix string
	}{
		{"REST API", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: stage}, ""},
		{"HTTP API", gatewayevent.Options{Profile: deploy.ProfileHTTPAPI}, "-"},
		{"Function URL", gatewayevent.Options{Profile: deploy.ProfileFunctionURL}, "-"},
	}
	requests := []struct {
		name string
		r    req
	}{
		{"CreateTable", req{method: http.MethodPost, path: "/Tables", body: `{"TableName":"anonymous"}`,
			header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content", "Accept": "application/json;odata=minimalmetadata"}}},
		{"QueryEntities", req{method: http.MethodGet, path: "/anonymous()"}},
		{"Batch", req{method: http.MethodPost, path: "/$batch", body: "--b\r\n\r\n--b--\r\n", header: map[string]string{"Content-Type": "multipart/mixed; boundary=b"}}},
		{"GetServiceProperties", req{method: http.MethodGet, path: "/", query: map[string][]string{"restype": {"service"}, "comp": {"properties"}}}},
	}
	for _, door := range doors {
		for _, tc := range requests {
			t.Run(door.name+"/"+tc.name, func(t *testing.T) {
				r := tc.r
				r.prefix = door.prefix
				anonymous := func() *http.Request {
					hr := newRequest(t, r)
					hr.Header.Del("Authorization")
					return hr
				}
				resp := withTokens.through(t, anonymous(), door.o)
				wantType := "application/json"
				if r.query != nil {
					wantType = "application/xml"
				}
				if resp.Status != http.StatusUnauthorized || resp.Header.Get("x-ms-error-code") != "NoAuthenticationInformation" ||
					resp.Header.Get("WWW-Authenticate") != challenge || resp.Header.Get("Content-Type") != wantType ||
					resp.Header.Get("Preference-Applied") != "" {
					t.Errorf("with tokens: %d %s, WWW-Authenticate %q, Content-Type %q, Preference-Applied %q; want 401 NoAuthenticationInformation %q %s none: %s",
						resp.Status, resp.Header.Get("x-ms-error-code"), resp.Header.Get("WWW-Authenticate"), resp.Header.Get("Content-Type"),
						resp.Header.Get("Preference-Applied"), challenge, wantType, resp.Body)
				}
				resp = keysOnly.through(t, anonymous(), door.o)
				if resp.Status != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" || resp.Header.Get("WWW-Authenticate") != "" {
					t.Errorf("keys only: %d %s %q, want 403 AuthenticationFailed without a challenge", resp.Status,
						resp.Header.Get("x-ms-error-code"), resp.Header.Get("WWW-Authenticate"))
				}
			})
		}
		t.Run(door.name+"/Preflight", func(t *testing.T) {
			pre := newRequest(t, req{method: http.MethodOptions, path: "/Tables", prefix: door.prefix,
				header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"}})
			pre.Header.Del("Authorization")
			if resp := withTokens.through(t, pre, door.o); resp.Status != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "CorsPreflightFailure" {
				t.Errorf("preflight: %d %s, want 403 CorsPreflightFailure", resp.Status, resp.Header.Get("x-ms-error-code"))
			}
		})
	}
}
