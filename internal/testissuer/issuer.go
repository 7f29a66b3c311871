// Package testissuer is an OpenID Connect token issuer for tests, on a
// loopback httptest.Server: a discovery document, a JWKS of keys the test
// generates (RS256 and ES256), key rotation, and signed JWTs, plus an
// azcore.TokenCredential that hands them to the official SDKs. An issuer
// may be laid out as a Microsoft Entra tenant (NewTenant), so that a
// client can discover it from the service's bearer challenge
// (TenantDiscovery, TenantCredential, RequestLog: challenge.go). Signing
// is go-jose's; nothing here is hand-rolled crypto.
package testissuer

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	jose "github.com/go-jose/go-jose/v4"
)

// Key is a signing key with its key id.
type Key struct {
	ID   string
	Alg  jose.SignatureAlgorithm
	priv crypto.Signer
}

var keySeq atomic.Int64

// NewKey generates a key for alg (jose.RS256 or jose.ES256).
func NewKey(t testing.TB, alg jose.SignatureAlgorithm) *Key {
	t.Helper()
	var (
		priv crypto.Signer
		err  error
	)
	switch alg {
	case jose.RS256:
		priv, err = rsa.GenerateKey(rand.Reader, 2048)
	case jose.ES256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	default:
		t.Fatalf("testissuer: unsupported algorithm %s", alg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &Key{ID: fmt.Sprintf("key-%s-%d", alg, keySeq.Add(1)), Alg: alg, priv: priv}
}

// Sign makes a compact JWS of claims with the key, its id in the header.
func (k *Key) Sign(t testing.TB, claims map[string]any) string {
	t.Helper()
	s, err := k.sign(claims)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (k *Key) sign(claims map[string]any) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: k.Alg, Key: k.priv},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", k.ID))
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return "", err
	}
	return jws.CompactSerialize()
}

// Issuer serves discovery and keys on loopback.
type Issuer struct {
	// URL is the issuer identifier (the iss of its tokens).
	URL string
	// Tenant is the tenant of an issuer laid out as a Microsoft Entra
	// tenant (NewTenant), "" otherwise.
	Tenant string

	mu             sync.Mutex
	keys           []*Key
	discoveryFault Fault
	keysFault      Fault
	jwksFetches    atomic.Int64
}

// Fault is how the issuer answers a request it is told to fail.
type Fault int

const (
	// Healthy answers normally.
	Healthy Fault = iota
	// ServerError answers 500 Internal Server Error.
	ServerError
	// BadJSON answers 200 with a body that is not JSON.
	BadJSON
)

// SetDiscoveryFault makes the discovery document answer f.
func (is *Issuer) SetDiscoveryFault(f Fault) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.discoveryFault = f
}

// SetKeysFault makes the key set answer f.
func (is *Issuer) SetKeysFault(f Fault) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keysFault = f
}

// faulted answers f and reports whether it did (f is not Healthy).
func faulted(w http.ResponseWriter, f Fault) bool {
	switch f {
	case ServerError:
		http.Error(w, "issuer failure", http.StatusInternalServerError)
	case BadJSON:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys": [`))
	default:
		return false
	}
	return true
}

// New starts an issuer publishing keys until the test ends. Its identifier
// is the server's root, with its authorization endpoint at /authorize and
// its keys at /keys.
func New(t testing.TB, keys ...*Key) *Issuer {
	t.Helper()
	return start(t, "", issuerPaths{authorize: "/authorize", keys: "/keys"}, keys)
}

// NewTenant starts an issuer laid out as a Microsoft Entra tenant is, on
// loopback: its identifier is <root>/<tenant>/v2.0, its authorization
// endpoint <root>/<tenant>/oauth2/v2.0/authorize and its keys
// <root>/<tenant>/discovery/v2.0/keys. A client that takes the tenant from
// the first path segment of a challenge's authorization_uri, as the Azure
// SDKs do, finds tenant there.
func NewTenant(t testing.TB, tenant string, keys ...*Key) *Issuer {
	t.Helper()
	base := "/" + tenant
	return start(t, tenant, issuerPaths{issuer: base + "/v2.0", authorize: base + "/oauth2/v2.0/authorize", keys: base + "/discovery/v2.0/keys"}, keys)
}

// issuerPaths are where an issuer lives below its server's root: its
// identifier (discovery is below it), authorization endpoint and keys.
type issuerPaths struct {
	issuer, authorize, keys string
}

func start(t testing.TB, tenant string, paths issuerPaths, keys []*Key) *Issuer {
	is := &Issuer{Tenant: tenant, keys: keys}
	mux := http.NewServeMux()
	srv := httptest.NewUnstartedServer(mux)
	root := "http://" + srv.Listener.Addr().String()
	is.URL = root + paths.issuer
	mux.HandleFunc("GET "+paths.issuer+"/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		f := is.discoveryFault
		is.mu.Unlock()
		if faulted(w, f) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer":                                is.URL,
			"authorization_endpoint":                root + paths.authorize,
			"token_endpoint":                        root + "/token",
			"jwks_uri":                              root + paths.keys,
			"response_types_supported":              []string{"code"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("GET "+paths.keys, func(w http.ResponseWriter, r *http.Request) {
		is.jwksFetches.Add(1)
		is.mu.Lock()
		if faulted(w, is.keysFault) {
			is.mu.Unlock()
			return
		}
		set := jose.JSONWebKeySet{}
		for _, k := range is.keys {
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.priv.Public(), KeyID: k.ID, Algorithm: string(k.Alg), Use: "sig"})
		}
		is.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	return is
}

// SetKeys replaces the published keys: a key rotation.
func (is *Issuer) SetKeys(keys ...*Key) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys = keys
}

// JWKSFetches counts the requests for the key set so far.
func (is *Issuer) JWKSFetches() int64 { return is.jwksFetches.Load() }

// Claims are a token's claims.
type Claims map[string]any

// Token signs claims with k after filling what is missing: iss (this
// issuer), aud (https://storage.azure.com), sub, iat, nbf (a minute ago)
// and exp (in an hour). A claim set to nil is left out.
func (is *Issuer) Token(t testing.TB, k *Key, c Claims) string {
	return Token(t, k, is.URL, c)
}

// Token signs claims for issuer iss with the defaults Issuer.Token fills.
func Token(t testing.TB, k *Key, iss string, c Claims) string {
	t.Helper()
	return k.Sign(t, withDefaults(iss, c))
}

// withDefaults is c with the claims Token fills when they are missing.
func withDefaults(iss string, c Claims) map[string]any {
	now := time.Now()
	full := map[string]any{
		"iss": iss, "aud": "https://storage.azure.com", "sub": "subject",
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
	}
	for name, v := range c {
		if v == nil {
			delete(full, name)
			continue
		}
		full[name] = v
	}
	return full
}

// Credential is an azcore.TokenCredential that returns Token's result; it
// records the scopes the SDK asked for.
type Credential struct {
	Token func() string

	mu     sync.Mutex
	scopes []string
}

// GetToken implements azcore.TokenCredential.
func (c *Credential) GetToken(_ context.Context, opts policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	c.scopes = append(c.scopes, opts.Scopes...)
	c.mu.Unlock()
	return azcore.AccessToken{Token: c.Token(), ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// Scopes lists the scopes asked for so far.
func (c *Credential) Scopes() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.scopes...)
}
