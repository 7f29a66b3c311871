package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
)

// PolicyLookup returns the stored access policies (the ACL, ?comp=acl) of a
// table in an account. The verifier calls it only for a valid table SAS that
// names a policy (si). A table that does not exist may be reported either as
// an empty list or as an error: an *apierr.Error is returned to the caller
// unchanged, and any other error is wrapped as InternalError with the
// original kept as its cause (errors.Is still sees store sentinels).
type PolicyLookup func(ctx context.Context, account, table string) ([]model.SignedIdentifier, error)

// Request is what the verifier needs from an HTTP request. See the package
// documentation for how each field must be filled.
type Request struct {
	// Account is the account the request addresses: the first path segment
	// of a path-style URL or the first label of the host.
	Account string
	// SignedPath is the request path exactly as the client sent it on the
	// wire (still percent-encoded), including any API Gateway stage prefix
	// or base path and the path-style account segment.
	SignedPath string
	// PathDecoded says a proxy decoded the path before it reached us (an
	// API Gateway HTTP API does), so SignedPath is Go's escaping of the
	// decoded path rather than the client's spelling. The verifier then
	// also tries the SDKs' spellings, only those that decode back to the
	// same path (decodedPathSpellings).
	PathDecoded bool
	// AltSignedPaths are other paths a Shared Key signature may sign for
	// this request, tried after SignedPath (each with its decoded-path
	// spellings when PathDecoded): a path-style secondary request may be
	// signed for the primary's path.
	AltSignedPaths []string
	// Query is the decoded query string.
	Query url.Values
	// Header holds the request headers as received.
	Header http.Header
	// Method is the HTTP verb on the wire.
	Method string
	// Table is the table the operation targets, or "" for service-level
	// operations and for Query Tables and Create Table. A table SAS for
	// another table is refused here already, before its stored access
	// policy is looked up.
	Table string
	// ClientIP is the caller's address, for a SAS sip restriction.
	ClientIP netip.Addr
	// HTTPS reports whether the client reached the service over TLS, for a
	// SAS spr=https restriction.
	HTTPS bool
	// Now is the time to check dates against; zero means time.Now().
	Now time.Time
	// Endpoint is the account's endpoint as the client addressed it
	// (scheme://host[/base path][/account]); a bearer token whose audience
	// is the account's own endpoint is checked against it.
	Endpoint string
}

// MaxClockSkew is how far a Shared Key request's date may be from the
// server's clock. Azure: "the storage services ensure that a request is no
// older than 15 minutes by the time it reaches the service".
const MaxClockSkew = 15 * time.Minute

// Verifier authenticates requests against a fixed set of accounts. It is
// safe for concurrent use.
type Verifier struct {
	accounts map[string]*accountEntry
	policies PolicyLookup
	tokens   TokenVerifier // nil: bearer tokens are refused
}

// accountEntry is an account prepared for verification: HMAC keys are built
// once, and the Shared Key principals are shared by every request because
// they carry no per-request state.
type accountEntry struct {
	name          string
	keys          []*macKey
	sharedKey     *Principal
	sharedKeyLite *Principal
}

// NewVerifier prepares accounts for verification. Each account needs a
// valid name and one or two non-empty keys, and names must be unique.
// policies may be nil, in which case no table SAS that names a stored access
// policy is accepted.
func NewVerifier(accounts []Account, policies PolicyLookup, opts ...VerifierOption) (*Verifier, error) {
	if len(accounts) == 0 {
		return nil, fmt.Errorf("auth: no accounts configured")
	}
	v := &Verifier{accounts: make(map[string]*accountEntry, len(accounts)), policies: policies}
	for _, a := range accounts {
		if err := validateAccountName(a.Name); err != nil {
			return nil, err
		}
		if _, dup := v.accounts[a.Name]; dup {
			return nil, fmt.Errorf("auth: account %q configured twice", a.Name)
		}
		if len(a.Keys) == 0 || len(a.Keys) > maxKeysPerAccount {
			return nil, fmt.Errorf("auth: account %q must have 1 or %d keys, has %d", a.Name, maxKeysPerAccount, len(a.Keys))
		}
		e := &accountEntry{name: a.Name}
		for i, k := range a.Keys {
			if len(k) == 0 {
				return nil, fmt.Errorf("auth: key %d of account %q is empty", i+1, a.Name)
			}
			e.keys = append(e.keys, newMACKey(k))
		}
		e.sharedKey = &Principal{account: a.Name, scheme: SchemeSharedKey}
		e.sharedKeyLite = &Principal{account: a.Name, scheme: SchemeSharedKeyLite}
		v.accounts[a.Name] = e
	}
	for _, o := range opts {
		o(v)
	}
	return v, nil
}

// AccountName returns the configured account that name addresses, and
// whether there is one. Account names are lower-case on Azure, and DNS,
// which carries them in host-style URLs, ignores case: any spelling of a
// configured name addresses that one account, by its configured name, on
// every path (path-style, host-style, Lambda), so no request can open a
// second namespace under another spelling.
func (v *Verifier) AccountName(name string) (string, bool) {
	if a, ok := v.accounts[strings.ToLower(name)]; ok {
		return a.name, true
	}
	return "", false
}

// Authenticate checks the request's credentials: the Authorization header
// when present (Shared Key, Shared Key Lite, or a bearer token when the
// verifier was built WithTokens), otherwise a SAS token in the
// query. It returns the authenticated principal, or an *apierr.Error. The
// Table service has no anonymous access: a request without credentials
// gets Azure's bearer challenge where a token would sign it in, and 403
// AuthenticationFailed elsewhere (noCredentials).
func (v *Verifier) Authenticate(ctx context.Context, r Request) (*Principal, error) {
	if r.Now.IsZero() {
		r.Now = time.Now()
	}
	acct, ok := v.accounts[strings.ToLower(r.Account)]
	if !ok {
		return nil, authFailed("The account %q is not served here.", r.Account)
	}
	if auth := r.Header.Values("Authorization"); len(auth) > 0 {
		if len(auth) > 1 {
			return nil, apierr.Newf(apierr.InvalidAuthenticationInfo, "More than one Authorization header was sent.")
		}
		if token, ok := cutBearer(auth[0]); ok {
			// A copy of r for the token path, whose verifier may keep
			// it: taking r's own address there would move r to the heap
			// on every request, Shared Key's too.
			br := r
			return v.authenticateBearer(ctx, acct, &br, token)
		}
		return v.authenticateSharedKey(acct, &r, auth[0])
	}
	if _, ok := r.Query["sig"]; ok {
		return v.authenticateSAS(ctx, acct, &r)
	}
	return nil, v.noCredentials(&r)
}

// cutBearer splits "Bearer <token>"; the scheme name is case-insensitive
// (RFC 6750 section 2.1, RFC 9110 section 11.1).
func cutBearer(h string) (string, bool) {
	h = strings.TrimSpace(h)
	if len(h) < len(schemeNameBearer) || !strings.EqualFold(h[:len(schemeNameBearer)], schemeNameBearer) {
		return "", false
	}
	rest := h[len(schemeNameBearer):]
	if rest != "" && rest[0] != ' ' {
		return "", false
	}
	return rest, true
}

// authFailed is the 403 AuthenticationFailed answer with Azure's
// AuthenticationErrorDetail-style explanation.
func authFailed(format string, args ...any) *apierr.Error {
	return apierr.Newf(apierr.AuthenticationFailed, format, args...)
}
