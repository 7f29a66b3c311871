package functions_test

import (
	"net/http"
	"testing"
)

// TestAnonymousChallenge: through every front door (each profile, on the
// execute-api domain and behind a custom domain) to the real bootstraps
// under the emulator, configured with a token issuer as a deployment is, a
// request without credentials gets Azure's 401 NoAuthenticationInformation
// with the issuer's challenge, as in the Java SDK's recording
// TableAsyncClientTest.createTableWithMultipleTenants
// (Azure/azure-sdk-for-java sdk/tables/azure-data-tables/src/test/resources/session-records);
// a CORS preflight is answered from the CORS rules as before.
func TestAnonymousChallenge(t *testing.T) {
	_, rie, dir := needBootstraps(t)
	d := startDeployment(t, dir, rie)
	challenge := "Bearer authorization_uri=" + d.issuer.URL + " resource_id=https://storage.azure.com"
	for _, m := range profileMounts() {
		g := newGateway(t, m.opts, d.invoke)
		t.Run(m.name, func(t *testing.T) {
			for _, r := range []rawReq{
				{method: http.MethodPost, path: "/Tables", body: `{"TableName":"anonymous"}`,
					header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content", "x-ms-version": "2020-12-06"}},
				{method: http.MethodGet, path: "/Tables"},
				{method: http.MethodGet, path: "/", query: map[string][]string{"restype": {"service"}, "comp": {"properties"}}},
			} {
				r.unsigned = true
				resp := rawRequest(t, g, r)
				if resp.status != http.StatusUnauthorized || resp.code != "NoAuthenticationInformation" || resp.header.Get("WWW-Authenticate") != challenge ||
					resp.header.Get("Preference-Applied") != "" {
					t.Errorf("%s %s: %d %s %q (Preference-Applied %q), want 401 NoAuthenticationInformation %q: %s",
						r.method, r.path, resp.status, resp.code, resp.header.Get("WWW-Authenticate"), resp.header.Get("Preference-Applied"), challenge, resp.body)
				}
			}
			pre := rawRequest(t, g, rawReq{method: http.MethodOptions, path: "/Tables", unsigned: true,
				header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "GET"}})
			if pre.status != http.StatusForbidden || pre.code != "CorsPreflightFailure" {
				t.Errorf("preflight: %d %s, want 403 CorsPreflightFailure", pre.status, pre.code)
			}
		})
	}
}
