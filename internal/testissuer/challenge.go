package testissuer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	jose "github.com/go-jose/go-jose/v4"
)

// TenantDiscovery signs requests in the way the Java SDK
// (TableClientBuilder.enableTenantDiscovery) and the .NET SDK
// (TableClientOptions.EnableTenantDiscovery) do, through azcore's
// BearerTokenPolicy (policy.BearerTokenOptions.AuthorizationHandler): it
// knows no tenant at first and sends the first request without
// credentials; from the 401 answer's challenge ("Bearer
// authorization_uri=https://<authority>/<tenant>/... resource_id=<resource>")
// it takes the tenant, the first path segment of authorization_uri, and
// the scope, resource_id + "/.default"; it asks the credential for a token
// of that tenant and scope and sends the request again, and signs every
// later request so. azcore has no such handler of its own, and aztables
// builds its BearerTokenPolicy without one.
type TenantDiscovery struct {
	mu     sync.Mutex
	tenant string
	scope  string
}

// Handler is the authorization handler for
// runtime.NewBearerTokenPolicy's policy.BearerTokenOptions.
func (d *TenantDiscovery) Handler() policy.AuthorizationHandler {
	return policy.AuthorizationHandler{OnRequest: d.onRequest, OnChallenge: d.onChallenge}
}

func (d *TenantDiscovery) onRequest(_ *policy.Request, authorize func(policy.TokenRequestOptions) error) error {
	d.mu.Lock()
	tenant, scope := d.tenant, d.scope
	d.mu.Unlock()
	if tenant == "" {
		// Not known yet: the service names it in its answer.
		return nil
	}
	return authorize(policy.TokenRequestOptions{TenantID: tenant, Scopes: []string{scope}})
}

func (d *TenantDiscovery) onChallenge(_ *policy.Request, resp *http.Response, authorize func(policy.TokenRequestOptions) error) error {
	tenant, scope, err := ParseChallenge(resp.Header.Get("WWW-Authenticate"))
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.tenant, d.scope = tenant, scope
	d.mu.Unlock()
	return authorize(policy.TokenRequestOptions{TenantID: tenant, Scopes: []string{scope}})
}

// ParseChallenge reads Azure Storage's bearer challenge: the tenant (the
// first path segment of authorization_uri) and the scope to ask a token
// for (resource_id + "/.default"), as the Azure SDKs read it.
func ParseChallenge(challenge string) (tenant, scope string, err error) {
	params, ok := strings.CutPrefix(challenge, "Bearer ")
	if !ok {
		return "", "", fmt.Errorf("not a bearer challenge: %q", challenge)
	}
	var authority, resource string
	for _, p := range strings.Fields(params) {
		name, value, _ := strings.Cut(p, "=")
		switch name {
		case "authorization_uri":
			authority = value
		case "resource_id":
			resource = value
		}
	}
	u, err := url.Parse(authority)
	if err != nil || resource == "" {
		return "", "", fmt.Errorf("challenge %q names no authority and resource", challenge)
	}
	tenant, _, _ = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if tenant == "" {
		return "", "", fmt.Errorf("challenge %q names no tenant", challenge)
	}
	return tenant, resource + "/.default", nil
}

// TenantCredential is an azcore.TokenCredential that knows no tenant of
// its own, as a multi-tenant application's: it hands out a token only when
// asked for a tenant, by one of Issuers (by Issuer.Tenant), and for one
// resource ("<resource>/.default", the token's aud). Claims go in every
// token. It records what it was asked.
type TenantCredential struct {
	Issuers []*Issuer
	Key     *Key
	Claims  Claims

	mu    sync.Mutex
	asked []TokenRequest
}

// TokenRequest is what a TenantCredential was asked for.
type TokenRequest struct {
	Tenant string
	Scopes []string
}

// ErrNoTenant is what a TenantCredential answers a request for a token
// that names no tenant.
var ErrNoTenant = errors.New("testissuer: the credential knows no tenant; a token needs one")

// GetToken implements azcore.TokenCredential.
func (c *TenantCredential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	c.asked = append(c.asked, TokenRequest{Tenant: opts.TenantID, Scopes: append([]string(nil), opts.Scopes...)})
	c.mu.Unlock()
	if opts.TenantID == "" {
		return azcore.AccessToken{}, ErrNoTenant
	}
	if len(opts.Scopes) != 1 || !strings.HasSuffix(opts.Scopes[0], "/.default") {
		return azcore.AccessToken{}, fmt.Errorf("testissuer: scopes %q, want one <resource>/.default", opts.Scopes)
	}
	for _, is := range c.Issuers {
		if is.Tenant != opts.TenantID {
			continue
		}
		claims := Claims{"aud": strings.TrimSuffix(opts.Scopes[0], "/.default"), "tid": is.Tenant}
		for k, v := range c.Claims {
			claims[k] = v
		}
		token, err := c.Key.sign(withDefaults(is.URL, claims))
		if err != nil {
			return azcore.AccessToken{}, err
		}
		return azcore.AccessToken{Token: token, ExpiresOn: time.Now().Add(time.Hour)}, nil
	}
	return azcore.AccessToken{}, fmt.Errorf("testissuer: no issuer of tenant %q", opts.TenantID)
}

// Asked lists the token requests so far.
func (c *TenantCredential) Asked() []TokenRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]TokenRequest(nil), c.asked...)
}

// Exchange is one request a client sent and the answer it got, as
// RequestLog records it: never the token itself.
type Exchange struct {
	Method, Path string
	// Authorization is the scheme of the request's Authorization header
	// ("Bearer"), "" without one.
	Authorization string
	Status        int
	ErrorCode     string
	Challenge     string
}

func (e Exchange) String() string {
	auth := "no Authorization"
	if e.Authorization != "" {
		auth = "Authorization: " + e.Authorization + " <token>"
	}
	s := fmt.Sprintf("%s %s (%s) -> %d", e.Method, e.Path, auth, e.Status)
	if e.ErrorCode != "" {
		s += " " + e.ErrorCode
	}
	if e.Challenge != "" {
		s += ", WWW-Authenticate: " + e.Challenge
	}
	return s
}

// RequestLog is an azcore per-retry policy that records every request the
// client sends and the answer, after BearerTokenPolicy in the pipeline so
// that it sees each attempt, the signed retry of a challenge included.
// Logf, when set, gets a line per exchange.
type RequestLog struct {
	Logf func(format string, args ...any)

	mu        sync.Mutex
	exchanges []Exchange
}

// Do implements policy.Policy.
func (l *RequestLog) Do(req *policy.Request) (*http.Response, error) {
	raw := req.Raw()
	e := Exchange{Method: raw.Method, Path: raw.URL.EscapedPath()}
	if scheme, _, ok := strings.Cut(raw.Header.Get("Authorization"), " "); ok {
		e.Authorization = scheme
	}
	resp, err := req.Next()
	if err != nil {
		return resp, err
	}
	e.Status, e.ErrorCode, e.Challenge = resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("WWW-Authenticate")
	l.mu.Lock()
	l.exchanges = append(l.exchanges, e)
	l.mu.Unlock()
	if l.Logf != nil {
		l.Logf("%s", e)
	}
	return resp, nil
}

// Exchanges lists what was recorded so far.
func (l *RequestLog) Exchanges() []Exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Exchange(nil), l.exchanges...)
}

// SignInScenario is what a scripted SDK run of challenge-based sign-in
// needs (e2e/browser/node-challenge.mjs, e2e/python/challenge.py): an
// issuer laid out as the Microsoft Entra tenant whose tokens the service
// takes, another as the application's home tenant, the service's
// -oauth-config giving the application the contributor role over
// devstoreaccount1, and a token of each tenant for the script's
// credential.
type SignInScenario struct {
	Issuer      *Issuer // the tenant the service takes tokens of
	Tenant      string
	Config      string // the -oauth-config file
	HomeToken   string // of the application's home tenant, which the service refuses
	TenantToken string // of Tenant
}

// NewSignInScenario sets the scenario up for the application app (its oid
// claim).
func NewSignInScenario(t testing.TB, app string) *SignInScenario {
	t.Helper()
	const tenant, home = "72f988bf-86f1-41af-91ab-2d7cd011db47", "0e2bd6cb-4a43-4f1c-9f17-6a3f1d1e5d01"
	key := NewKey(t, jose.ES256)
	iss, homeIss := NewTenant(t, tenant, key), NewTenant(t, home, key)
	config := filepath.Join(t.TempDir(), "oauth.json")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`{"issuers": [%q], "roles": [
		{"claim": "oid", "value": %q, "role": "contributor", "account": "devstoreaccount1"}]}`, iss.URL, app)), 0o600); err != nil {
		t.Fatal(err)
	}
	claims := Claims{"oid": app}
	return &SignInScenario{Issuer: iss, Tenant: tenant, Config: config,
		HomeToken: homeIss.Token(t, key, claims), TenantToken: iss.Token(t, key, claims)}
}

// Check checks the JSON line the scripted SDK run prints after creating
// a table with a credential whose first token is HomeToken: each
// request as the service answered it, and what the credential was asked
// for. The service must refuse the first attempt with 401
// InvalidAuthenticationInfo and the challenge of Issuer, and take the
// second, signed for Tenant from that challenge; the credential must have
// been asked first for no tenant, then for Tenant and the storage
// resource. It logs the requests, which show the exchange.
func (sc *SignInScenario) Check(t testing.TB, sdk string, out []byte) {
	issuerURL, tenant := sc.Issuer.URL, sc.Tenant
	t.Helper()
	type request struct {
		Method, Path, Authorization, Code, Challenge string
		Status                                       int
	}
	var got struct {
		Requests []request `json:"requests"`
		Asked    []struct {
			Tenant string   `json:"tenant"`
			Scopes []string `json:"scopes"`
		} `json:"asked"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
		t.Fatalf("%s printed %q: %v", sdk, out, err)
	}
	for _, r := range got.Requests {
		t.Logf("%s: %s %s (Authorization: %s) -> %d %s %s", sdk, r.Method, r.Path, r.Authorization, r.Status, r.Code, r.Challenge)
	}
	t.Logf("%s: the credential was asked for %+v", sdk, got.Asked)
	challenge := "Bearer authorization_uri=" + issuerURL + " resource_id=https://storage.azure.com"
	want := []request{
		{Method: "POST", Path: "/devstoreaccount1/Tables", Authorization: "Bearer", Status: 401, Code: "InvalidAuthenticationInfo", Challenge: challenge},
		{Method: "POST", Path: "/devstoreaccount1/Tables", Authorization: "Bearer", Status: 201},
	}
	if len(got.Requests) != len(want) || got.Requests[0] != want[0] || got.Requests[1] != want[1] {
		t.Errorf("%s: requests %+v, want %+v", sdk, got.Requests, want)
	}
	if len(got.Asked) != 2 || got.Asked[0].Tenant != "" || got.Asked[1].Tenant != tenant ||
		len(got.Asked[1].Scopes) != 1 || got.Asked[1].Scopes[0] != "https://storage.azure.com/.default" {
		t.Errorf("%s: the credential was asked %+v, want no tenant, then %s for https://storage.azure.com/.default", sdk, got.Asked, tenant)
	}
}
