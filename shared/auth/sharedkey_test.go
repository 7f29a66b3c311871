package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/operation"
)

const vectorDate = "Mon, 02 Jan 2006 15:04:05 GMT"

// TestSharedKeyVectors checks signatures computed independently of this
// package (openssl dgst -sha256 -mac HMAC over the documented
// strings-to-sign with the devstoreaccount1 key), in the Python SDK's
// SharedKey form and the Go/JS/.NET SharedKeyLite form.
func TestSharedKeyVectors(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	tests := []struct {
		name    string
		method  string
		path    string
		rawQ    string
		headers map[string]string
		auth    string
		scheme  auth.Scheme
	}{
		{
			name:   "SharedKey PUT entity, Content-Type signed, x-ms-date",
			method: http.MethodPut,
			path:   "/devstoreaccount1/mytable(PartitionKey='pk',RowKey='rk')",
			headers: map[string]string{
				"Content-Type": "application/json",
				"x-ms-date":    vectorDate,
			},
			auth:   "SharedKey devstoreaccount1:z9bt7jIIO8e2Zb8bD/3hWW5ASG7t0FYiCv/eGXwcO3k=",
			scheme: auth.SchemeSharedKey,
		},
		{
			name:    "SharedKey GET ACL signs ?comp=acl only",
			method:  http.MethodGet,
			path:    "/devstoreaccount1/mytable",
			rawQ:    "comp=acl&timeout=30",
			headers: map[string]string{"x-ms-date": vectorDate},
			auth:    "SharedKey devstoreaccount1:FHXevh/18XFjOWY5iXa4twFwt5xsBJpbt0748kocHO4=",
			scheme:  auth.SchemeSharedKey,
		},
		{
			name:    "SharedKey falls back to the Date header",
			method:  http.MethodGet,
			path:    "/devstoreaccount1/mytable",
			rawQ:    "comp=acl",
			headers: map[string]string{"Date": vectorDate},
			auth:    "SharedKey devstoreaccount1:FHXevh/18XFjOWY5iXa4twFwt5xsBJpbt0748kocHO4=",
			scheme:  auth.SchemeSharedKey,
		},
		{
			name:    "SharedKeyLite path-style names the account twice",
			method:  http.MethodPost,
			path:    "/devstoreaccount1/Tables",
			headers: map[string]string{"x-ms-date": vectorDate, "Content-Type": "application/json"},
			auth:    "SharedKeyLite devstoreaccount1:3svmP0XHvm4ExgARMndpDUhKEUmE1Ao/3JqG3Wfp+UE=",
			scheme:  auth.SchemeSharedKeyLite,
		},
		{
			name:   "SharedKey with Content-MD5 and an API Gateway stage prefix",
			method: http.MethodPost,
			path:   "/Prod/devstoreaccount1/Tables",
			headers: map[string]string{
				"x-ms-date":    vectorDate,
				"Content-MD5":  "rL0Y20zC+Fzt72VPzMSk2A==",
				"Content-Type": "application/json;odata=nometadata",
			},
			auth:   "SharedKey devstoreaccount1:emIvHEQ4SBl1+q3Y8PjJ0+bjCguMQz/3M72wcmIaLwA=",
			scheme: auth.SchemeSharedKey,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.rawQ)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			for k, val := range tc.headers {
				h.Set(k, val)
			}
			h.Set("Authorization", tc.auth)
			p, err := v.Authenticate(context.Background(), auth.Request{
				Account: devAccount, SignedPath: tc.path, Query: q, Header: h, Method: tc.method, Now: testNow,
			})
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if p.Scheme() != tc.scheme || p.Account() != devAccount {
				t.Fatalf("principal %v/%s, want %v/%s", p.Scheme(), p.Account(), tc.scheme, devAccount)
			}
			if err := p.Authorize(operation.SetTableACL, "mytable"); err != nil {
				t.Fatalf("Shared Key must be allowed everything: %v", err)
			}
			if !p.AllowsEntity("any", "entity") {
				t.Fatal("Shared Key must reach every entity")
			}
			if _, ok := p.KeyRange(); ok {
				t.Fatal("Shared Key has no key range")
			}
		})
	}
}

// signedRequest builds a request signed by this package's signer with key.
func signedRequest(t *testing.T, scheme auth.Scheme, key []byte, method, rawURL string, date string) auth.Request {
	t.Helper()
	req, err := http.NewRequest(method, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-date", date)
	req.Header.Set("Content-Type", "application/json")
	sign := auth.SignSharedKeyLite
	if scheme == auth.SchemeSharedKey {
		sign = auth.SignSharedKey
	}
	if err := sign(req, devAccount, key); err != nil {
		t.Fatal(err)
	}
	path, _, _ := strings.Cut(req.URL.RequestURI(), "?")
	return auth.Request{
		Account: devAccount, SignedPath: path, Query: req.URL.Query(), Header: req.Header,
		Method: method, Now: testNow,
	}
}

func TestSharedKeyKeysAndDates(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	const u = "http://127.0.0.1:10002/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')"
	at := func(d time.Duration) string { return testNow.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		name   string
		scheme auth.Scheme
		key    []byte
		date   string
		want   apierr.Code // "" for success
	}{
		{"first key, Lite", auth.SchemeSharedKeyLite, devKey(t), at(0), ""},
		{"second key, Lite", auth.SchemeSharedKeyLite, mustKey(t, secondKeyB64), at(0), ""},
		{"second key, SharedKey", auth.SchemeSharedKey, mustKey(t, secondKeyB64), at(0), ""},
		{"another account's key", auth.SchemeSharedKeyLite, mustKey(t, otherKeyB64), at(0), apierr.AuthenticationFailed},
		{"15 minutes old is still accepted", auth.SchemeSharedKeyLite, devKey(t), at(-15 * time.Minute), ""},
		{"15 minutes ahead is still accepted", auth.SchemeSharedKeyLite, devKey(t), at(15 * time.Minute), ""},
		{"15 minutes and 1 second old", auth.SchemeSharedKeyLite, devKey(t), at(-15*time.Minute - time.Second), apierr.AuthenticationFailed},
		{"15 minutes and 1 second ahead", auth.SchemeSharedKey, devKey(t), at(15*time.Minute + time.Second), apierr.AuthenticationFailed},
		{"date is not an HTTP date", auth.SchemeSharedKeyLite, devKey(t), "2006-01-02T15:04:05Z", apierr.AuthenticationFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := signedRequest(t, tc.scheme, tc.key, http.MethodGet, u, tc.date)
			p, err := v.Authenticate(context.Background(), r)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Authenticate: %v", err)
				}
				if p.Scheme() != tc.scheme {
					t.Fatalf("scheme %v, want %v", p.Scheme(), tc.scheme)
				}
				return
			}
			wantCode(t, err, tc.want, http.StatusForbidden)
		})
	}
}

func TestSharedKeyRefusals(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	const u = "http://127.0.0.1:10002/devstoreaccount1/mytable()?$filter=PartitionKey%20eq%20%27a%27"
	base := func(t *testing.T) auth.Request {
		return signedRequest(t, auth.SchemeSharedKeyLite, devKey(t), http.MethodGet, u, testNow.Format(http.TimeFormat))
	}
	tests := []struct {
		name   string
		mutate func(r *auth.Request)
		code   apierr.Code
		status int
	}{
		{"no Authorization and no SAS", func(r *auth.Request) { r.Header.Del("Authorization") }, apierr.AuthenticationFailed, 403},
		{"unknown account in the URL", func(r *auth.Request) { r.Account = "nosuchaccount" }, apierr.AuthenticationFailed, 403},
		{"header names another account", func(r *auth.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), devAccount, "otheraccount", 1))
		}, apierr.AuthenticationFailed, 403},
		{"signature of another path", func(r *auth.Request) { r.SignedPath = "/devstoreaccount1/othertable()" }, apierr.AuthenticationFailed, 403},
		{"signature tampered", func(r *auth.Request) {
			h := r.Header.Get("Authorization")
			r.Header.Set("Authorization", h[:len(h)-5]+"AAAA=")
		}, apierr.AuthenticationFailed, 403},
		{"signature not base64", func(r *auth.Request) {
			r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:not*base64*at*all*not*base64*at*all*xxxxxxxx")
		}, apierr.AuthenticationFailed, 403},
		{"no date header", func(r *auth.Request) { r.Header.Del("x-ms-date") }, apierr.AuthenticationFailed, 403},
		{"Date header signed but x-ms-date differs", func(r *auth.Request) {
			r.Header.Set("Date", r.Header.Get("x-ms-date"))
			r.Header.Set("x-ms-date", testNow.Add(time.Second).Format(http.TimeFormat))
		}, apierr.AuthenticationFailed, 403},
		{"Lite signature presented as SharedKey", func(r *auth.Request) {
			r.Header.Set("Authorization", "SharedKey"+strings.TrimPrefix(r.Header.Get("Authorization"), "SharedKeyLite"))
		}, apierr.AuthenticationFailed, 403},
		{"unsupported scheme", func(r *auth.Request) { r.Header.Set("Authorization", "Bearer eyJhbGciOi") }, apierr.AuthenticationFailed, 403},
		{"scheme without credentials", func(r *auth.Request) { r.Header.Set("Authorization", "SharedKey") }, apierr.InvalidAuthenticationInfo, 400},
		{"credentials without colon", func(r *auth.Request) { r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1") }, apierr.InvalidAuthenticationInfo, 400},
		{"empty signature", func(r *auth.Request) { r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:") }, apierr.InvalidAuthenticationInfo, 400},
		{"empty account", func(r *auth.Request) { r.Header.Set("Authorization", "SharedKeyLite :abc") }, apierr.InvalidAuthenticationInfo, 400},
		{"blank header", func(r *auth.Request) { r.Header.Set("Authorization", "  ") }, apierr.InvalidAuthenticationInfo, 400},
		{"two Authorization headers", func(r *auth.Request) { r.Header.Add("Authorization", r.Header.Get("Authorization")) }, apierr.InvalidAuthenticationInfo, 400},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := base(t)
			if _, err := v.Authenticate(context.Background(), r); err != nil {
				t.Fatalf("unmodified request refused: %v", err)
			}
			r = base(t)
			tc.mutate(&r)
			_, err := v.Authenticate(context.Background(), r)
			wantCode(t, err, tc.code, tc.status)
		})
	}
}

func TestSharedKeyMismatchNamesStringToSign(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	r := signedRequest(t, auth.SchemeSharedKeyLite, mustKey(t, otherKeyB64), http.MethodGet,
		"http://h/devstoreaccount1/Tables?comp=x", testNow.Format(http.TimeFormat))
	_, err := v.Authenticate(context.Background(), r)
	aerr, ok := apierr.As(err)
	if !ok {
		t.Fatalf("want *apierr.Error, got %v", err)
	}
	want := "'" + vectorDate + "\n/devstoreaccount1/devstoreaccount1/Tables?comp=x'"
	if !strings.Contains(aerr.Detail, want) {
		t.Fatalf("detail %q does not name the string-to-sign %q", aerr.Detail, want)
	}
}

// TestSharedKeyPathSpellings: the signature covers the path exactly as it
// came on the wire. Another spelling of it, even one that decodes to the
// same resource, is refused: accepting a decoded spelling would let the
// signature of one entity's path authorize another's.
func TestSharedKeyPathSpellings(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	key := devKey(t)
	tests := []struct {
		name       string
		signedURL  string // what the client signed (its EscapedPath)
		wirePath   string // what reached the verifier
		wantAccept bool
	}{
		{"wire path kept %27", "http://h/devstoreaccount1/t(PartitionKey='O%27%27Brien',RowKey='x')", "/devstoreaccount1/t(PartitionKey='O%27%27Brien',RowKey='x')", true},
		{"a URL without a path signs the root slash", "http://h?restype=service&comp=properties", "/", true},
		{"proxy decoded the path", "http://h/devstoreaccount1/t(PartitionKey='O%27%27Brien',RowKey='a%20b')", "/devstoreaccount1/t(PartitionKey='O''Brien',RowKey='a b')", false},
		{"client signed decoded, wire encoded", "http://h/devstoreaccount1/t(PartitionKey='a b')", "/devstoreaccount1/t(PartitionKey='a%20b')", false},
		{"client signed Go escaping, proxy decoded", "http://h/devstoreaccount1/t%28PartitionKey=%27a%20b%27%29", "/devstoreaccount1/t(PartitionKey='a b')", false},
		{"entity 'x y' replayed on entity 'x%20y'", "http://h/devstoreaccount1/t(PartitionKey='x%20y',RowKey='r')", "/devstoreaccount1/t(PartitionKey='x%2520y',RowKey='r')", false},
		{"entity 'x%20y' replayed on entity 'x y'", "http://h/devstoreaccount1/t(PartitionKey='x%2520y',RowKey='r')", "/devstoreaccount1/t(PartitionKey='x%20y',RowKey='r')", false},
		{"hex digits in another case", "http://h/devstoreaccount1/t(PartitionKey='%C3%A9',RowKey='r')", "/devstoreaccount1/t(PartitionKey='%c3%a9',RowKey='r')", false},
		{"table name percent-encoded", "http://h/devstoreaccount1/t()", "/devstoreaccount1/%74()", false},
		{"different key on the wire", "http://h/devstoreaccount1/t(PartitionKey='a')", "/devstoreaccount1/t(PartitionKey='b')", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := signedRequest(t, auth.SchemeSharedKeyLite, key, http.MethodGet, tc.signedURL, testNow.Format(http.TimeFormat))
			r.SignedPath = tc.wirePath
			_, err := v.Authenticate(context.Background(), r)
			if tc.wantAccept && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.wantAccept {
				wantCode(t, err, apierr.AuthenticationFailed, http.StatusForbidden)
			}
		})
	}
}

// TestSharedKeyDecodedPath: behind a proxy that decodes the path (an API
// Gateway HTTP API), the SDKs' spellings of the delivered path are
// accepted, and only spellings that decode back to it: a signature never
// authorizes another entity.
func TestSharedKeyDecodedPath(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	key := devKey(t)
	tests := []struct {
		name       string
		signedURL  string // what the client signed (its EscapedPath)
		decoded    string // what the proxy delivered
		wantAccept bool
	}{
		{"Go spelling (PathEscape)", "http://h/devstoreaccount1/t(PartitionKey='O%27%27Brien',RowKey='a%20b')", "/devstoreaccount1/t(PartitionKey='O''Brien',RowKey='a b')", true},
		{"RFC 3986 spelling (.NET, Python)", "http://h/devstoreaccount1/t(PartitionKey='a%2Cb%2B',RowKey='%E6%9D%B1')", "/devstoreaccount1/t(PartitionKey='a,b+',RowKey='東')", true},
		{"JavaScript spelling (encodeURIComponent)", "http://h/devstoreaccount1/t(PartitionKey='O''Brien(1)',RowKey='100%25')", "/devstoreaccount1/t(PartitionKey='O''Brien(1)',RowKey='100%')", true},
		{"the key 'x%20y' (sent as x%2520y)", "http://h/devstoreaccount1/t(PartitionKey='x%2520y',RowKey='r')", "/devstoreaccount1/t(PartitionKey='x%20y',RowKey='r')", true},
		{"'x y' replayed on the delivered 'x%20y'", "http://h/devstoreaccount1/t(PartitionKey='x%20y',RowKey='r')", "/devstoreaccount1/t(PartitionKey='x%20y',RowKey='r')", false},
		{"another key", "http://h/devstoreaccount1/t(PartitionKey='a%20b',RowKey='x')", "/devstoreaccount1/t(PartitionKey='a c',RowKey='x')", false},
		{"plain path", "http://h/devstoreaccount1/Tables", "/devstoreaccount1/Tables", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := signedRequest(t, auth.SchemeSharedKeyLite, key, http.MethodGet, tc.signedURL, testNow.Format(http.TimeFormat))
			r.SignedPath = (&url.URL{Path: tc.decoded}).EscapedPath()
			r.PathDecoded = true
			_, err := v.Authenticate(context.Background(), r)
			if tc.wantAccept && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.wantAccept {
				wantCode(t, err, apierr.AuthenticationFailed, http.StatusForbidden)
			}
			// Without the flag only the exact wire spelling counts.
			r.PathDecoded = false
			if _, err := v.Authenticate(context.Background(), r); err == nil && r.SignedPath != strings.TrimPrefix(tc.signedURL, "http://h") {
				t.Fatal("a decoded spelling was accepted without PathDecoded")
			}
		})
	}
}

func TestSharedKeyPrincipalIsShared(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	r := signedRequest(t, auth.SchemeSharedKeyLite, devKey(t), http.MethodGet, "http://h/devstoreaccount1/Tables", testNow.Format(http.TimeFormat))
	p1, err1 := v.Authenticate(context.Background(), r)
	p2, err2 := v.Authenticate(context.Background(), r)
	if err1 != nil || err2 != nil {
		t.Fatalf("Authenticate: %v, %v", err1, err2)
	}
	if p1 != p2 {
		t.Fatal("Shared Key principals should be reused, not allocated per request")
	}
}

func TestSignersRefuseBadInput(t *testing.T) {
	t.Parallel()
	req, _ := http.NewRequest(http.MethodGet, "http://h/devstoreaccount1/Tables", nil)
	if err := auth.SignSharedKeyLite(req, "", devKey(t)); err == nil {
		t.Error("empty account accepted")
	}
	if err := auth.SignSharedKey(req, devAccount, nil); err == nil {
		t.Error("empty key accepted")
	}
	if err := auth.SignSharedKeyLite(&http.Request{Header: http.Header{}}, devAccount, devKey(t)); err == nil {
		t.Error("request without URL accepted")
	}
	// Without x-ms-date the signer stamps the current time.
	if err := auth.SignSharedKeyLite(req, devAccount, devKey(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := http.ParseTime(req.Header.Get("x-ms-date")); err != nil {
		t.Fatalf("signer set x-ms-date %q: %v", req.Header.Get("x-ms-date"), err)
	}
}

func TestSharedKeyCompPresenceAndPrecedence(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, nil)
	tests := []struct {
		name  string
		query string
		sts   string
	}{
		{"empty comp still signs ?comp=", "comp=", vectorDate + "\n/devstoreaccount1/devstoreaccount1/t?comp="},
		{"only comp is signed, other parameters are not", "restype=service&comp=properties&timeout=5", vectorDate + "\n/devstoreaccount1/devstoreaccount1/t?comp=properties"},
		{"Authorization header wins over SAS parameters", "sv=2019-02-02&sig=garbage&tn=t", vectorDate + "\n/devstoreaccount1/devstoreaccount1/t"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			h := http.Header{}
			h.Set("x-ms-date", vectorDate)
			h.Set("Authorization", "SharedKeyLite devstoreaccount1:"+hmacB64(t, devKey(t), tc.sts))
			p, err := v.Authenticate(context.Background(), auth.Request{
				Account: devAccount, SignedPath: "/devstoreaccount1/t", Query: q, Header: h, Method: http.MethodGet, Now: testNow,
			})
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if p.Scheme() != auth.SchemeSharedKeyLite {
				t.Fatalf("scheme %v", p.Scheme())
			}
		})
	}
}

// tokenNeverAsked is a TokenVerifier for requests that must be refused
// before any token is looked at.
type tokenNeverAsked struct{ t *testing.T }

func (n tokenNeverAsked) VerifyToken(context.Context, string, *auth.Request) (*auth.TokenGrant, error) {
	n.t.Error("the token verifier was asked about a header without a token")
	return nil, apierr.New(apierr.AuthenticationFailed)
}

const neverAskedChallenge = "Bearer authorization_uri=https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/authorize resource_id=https://storage.azure.com"

func (tokenNeverAsked) Challenge() string { return neverAskedChallenge }

// TestRequestWithoutCredentials: a request with neither an Authorization
// header nor a SAS gets Azure's 401 NoAuthenticationInformation with the
// verifier's challenge where a bearer token would sign it in (tokens
// accepted, HTTPS, a version that takes tokens; the Java SDK's recording
// TableAsyncClientTest.createTableWithMultipleTenants), and 403
// AuthenticationFailed without a challenge everywhere else.
func TestRequestWithoutCredentials(t *testing.T) {
	t.Parallel()
	dev := auth.DevStoreAccount()
	keysOnly, err := auth.NewVerifier([]auth.Account{dev}, nil)
	if err != nil {
		t.Fatal(err)
	}
	withTokens, err := auth.NewVerifier([]auth.Account{dev}, nil, auth.WithTokens(tokenNeverAsked{t}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		v         *auth.Verifier
		https     bool
		version   string
		challenge bool
	}{
		{"tokens, HTTPS", withTokens, true, "2020-12-06", true},
		{"tokens, HTTPS, no version", withTokens, true, "", true},
		{"tokens, HTTPS, first version with tokens", withTokens, true, "2017-11-09", true},
		{"tokens, HTTPS, version before tokens", withTokens, true, "2017-07-29", false},
		{"tokens, plain HTTP", withTokens, false, "2020-12-06", false},
		{"keys and SAS only", keysOnly, true, "2020-12-06", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.version != "" {
				h.Set("X-Ms-Version", tc.version)
			}
			_, err := tc.v.Authenticate(context.Background(), auth.Request{Account: devAccount, SignedPath: "/" + devAccount + "/Tables",
				Query: url.Values{}, Method: http.MethodPost, Header: h, HTTPS: tc.https, Now: testNow})
			ae, ok := apierr.As(err)
			if !ok {
				t.Fatalf("got %v", err)
			}
			if tc.challenge {
				if ae.Code != apierr.NoAuthenticationInformation || ae.HTTPStatus() != http.StatusUnauthorized ||
					ae.Challenge != neverAskedChallenge || ae.Detail != "" {
					t.Errorf("got %d %s challenge %q detail %q", ae.HTTPStatus(), ae.Code, ae.Challenge, ae.Detail)
				}
				return
			}
			if ae.Code != apierr.AuthenticationFailed || ae.HTTPStatus() != http.StatusForbidden || ae.Challenge != "" {
				t.Errorf("got %d %s challenge %q, want 403 AuthenticationFailed without one", ae.HTTPStatus(), ae.Code, ae.Challenge)
			}
		})
	}
}

// TestBearerWithoutTokenRefusals: a Bearer header with nothing after the
// scheme, or only spaces, is malformed (400 InvalidAuthenticationInfo, like
// a Shared Key header without credentials) where tokens are accepted, and
// never reaches the token verifier.
func TestBearerWithoutTokenRefusals(t *testing.T) {
	t.Parallel()
	dev := auth.DevStoreAccount()
	v, err := auth.NewVerifier([]auth.Account{dev}, nil, auth.WithTokens(tokenNeverAsked{t}))
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	for _, header := range []string{"Bearer", "Bearer ", "Bearer    ", "bearer  "} {
		t.Run(fmt.Sprintf("%q", header), func(t *testing.T) {
			r := auth.Request{
				Account: devAccount, SignedPath: "/" + devAccount + "/Tables", Query: url.Values{}, Method: http.MethodGet,
				Header: http.Header{"Authorization": {header}, "X-Ms-Version": {"2019-02-02"}},
				HTTPS:  true, Now: testNow,
			}
			_, err := v.Authenticate(context.Background(), r)
			wantCode(t, err, apierr.InvalidAuthenticationInfo, http.StatusBadRequest)
		})
	}
}
