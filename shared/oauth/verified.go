package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// Verified checks token signatures against the configured issuers'
// published keys. See the package documentation.
type Verified struct {
	cfg     *Config
	client  *http.Client
	refresh time.Duration
	issuers map[string]*issuer
	now     func() time.Time // the key sets' clock; tests move it
}

// VerifiedOptions tune NewVerified.
type VerifiedOptions struct {
	// HTTPClient fetches discovery documents and keys; a client with a
	// 10 s timeout when nil.
	HTTPClient *http.Client
	// KeyRefresh is the least time between two fetches of an issuer's
	// keys for tokens that name a key id it does not hold (after a
	// rotation); DefaultKeyRefresh when 0.
	KeyRefresh time.Duration
}

// DefaultKeyRefresh bounds how often forged tokens can make the server
// fetch an issuer's keys: at most once per issuer per 10 s.
const DefaultKeyRefresh = 10 * time.Second

// issuer is one configured issuer, discovered on first use (or Discover)
// with its keys fetched, and kept, with its key set (keySet: cached,
// fetched again for an unknown key id).
type issuer struct {
	url string

	// challenge is the WWW-Authenticate value of this issuer's refusals.
	challenge string

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	failedAt time.Time
	failure  error
}

// rediscoverAfter spaces discovery attempts after a failure, so a down
// issuer is not asked once per request.
const rediscoverAfter = 5 * time.Second

// NewVerified returns a verified-mode verifier. cfg needs at least one
// issuer and one role assignment.
func NewVerified(cfg *Config, opts VerifiedOptions) (*Verified, error) {
	if cfg == nil || len(cfg.Issuers) == 0 {
		return nil, errors.New("oauth: verified mode needs at least one issuer")
	}
	if len(cfg.Roles) == 0 {
		return nil, errors.New("oauth: verified mode needs role assignments (roles); without them no token may do anything")
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	refresh := opts.KeyRefresh
	if refresh == 0 {
		refresh = DefaultKeyRefresh
	}
	v := &Verified{cfg: cfg, client: client, refresh: refresh, issuers: make(map[string]*issuer), now: time.Now}
	for _, u := range cfg.Issuers {
		// An Entra tenant is named as Azure names it, by its authorize
		// endpoint. Another issuer is named by its identifier, whose
		// discovery document gives its endpoints: the same answer from the
		// first request on, on every front door, discovered yet or not.
		is := &issuer{url: u, challenge: bearerChallenge(u, v.resourceID())}
		if host, tenant, ok := entraIssuer(u); ok {
			is.challenge = bearerChallenge(entraAuthorizeURI(host, tenant), v.resourceID())
		}
		v.issuers[u] = is
	}
	return v, nil
}

// Challenge implements auth.TokenVerifier: the first configured issuer's
// challenge, the one a token of no configured issuer gets too.
func (v *Verified) Challenge() string { return v.first().challenge }

// resourceID is the audience a client should ask a token for.
func (v *Verified) resourceID() string {
	if len(v.cfg.Audiences) > 0 {
		return v.cfg.Audiences[0]
	}
	return StorageAudience
}

// Discover fetches every issuer's discovery document and keys now, so a wrong issuer
// shows at start rather than at the first request. Failures are returned
// together; the issuers are discovered again on use.
func (v *Verified) Discover(ctx context.Context) error {
	var errs []error
	for _, u := range v.cfg.Issuers {
		if _, err := v.issuers[u].get(ctx, v); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (is *issuer) get(ctx context.Context, v *Verified) (*oidc.IDTokenVerifier, error) {
	is.mu.Lock()
	defer is.mu.Unlock()
	if is.verifier != nil {
		return is.verifier, nil
	}
	if is.failure != nil && time.Since(is.failedAt) < rediscoverAfter {
		return nil, is.failure
	}
	ctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, v.client), 10*time.Second)
	defer cancel()
	p, err := oidc.NewProvider(ctx, is.url)
	if err != nil {
		is.failure, is.failedAt = fmt.Errorf("oauth: discover issuer %s: %w", is.url, err), time.Now()
		return nil, is.failure
	}
	var meta struct {
		JWKSURL string `json:"jwks_uri"`
	}
	if err := p.Claims(&meta); err != nil || meta.JWKSURL == "" {
		is.failure, is.failedAt = fmt.Errorf("oauth: issuer %s publishes no jwks_uri", is.url), time.Now()
		return nil, is.failure
	}
	keys := &keySet{url: meta.JWKSURL, client: v.client, refresh: v.refresh, now: v.now}
	// Without keys no token can be judged: like a failed discovery, a 503
	// the client retries, not a 401 for every token.
	if err := keys.fetch(ctx); err != nil {
		is.failure, is.failedAt = err, time.Now()
		return nil, is.failure
	}
	is.verifier = oidc.NewVerifier(is.url, keys, &oidc.Config{
		// Audience, nbf and exp are checked below, the same way as in basic
		// mode: several audiences, and Shared Key's clock skew.
		SkipClientIDCheck:    true,
		SkipExpiryCheck:      true,
		SupportedSigningAlgs: []string{oidc.RS256, oidc.ES256},
	})
	return is.verifier, nil
}

// first is the first configured issuer, whose challenge a token of no
// configured issuer gets.
func (v *Verified) first() *issuer { return v.issuers[v.cfg.Issuers[0]] }

// VerifyToken implements auth.TokenVerifier.
func (v *Verified) VerifyToken(ctx context.Context, token string, r *auth.Request) (*auth.TokenGrant, error) {
	unverified, err := parseUnverified(token)
	if err != nil {
		return nil, auth.BearerError(v.Challenge(), reasonMalformed)
	}
	is, ok := v.issuers[unverified.Issuer]
	if !ok {
		return nil, auth.BearerError(v.Challenge(), reasonIssuer)
	}
	verifier, err := is.get(ctx, v)
	if err != nil {
		// The keys cannot be had: a retryable server-side failure, not
		// the client's fault.
		return nil, &apierr.Error{Code: apierr.ServerBusy, Detail: "The token issuer's signing keys could not be fetched.", Err: err}
	}
	// A compact token has one payload, the one parseUnverified read; once
	// its signature verifies, those claims are the verified ones.
	if _, err := verifier.Verify(ctx, token); err != nil {
		if ctx.Err() != nil {
			// The request ran out of time waiting for the issuer's keys:
			// retryable, and no verdict on the token.
			return nil, &apierr.Error{Code: apierr.ServerBusy, Detail: "The token issuer's signing keys did not arrive in time.", Err: err}
		}
		return nil, auth.BearerError(is.challenge, reasonSignature)
	}
	cl := unverified
	audiences := v.cfg.Audiences
	if len(audiences) == 0 {
		audiences = storageAudiences(r.Account, r.Endpoint)
	}
	if reason := cl.check(now(r), audiences); reason != "" {
		return nil, auth.BearerError(is.challenge, reason)
	}
	return v.cfg.grant(cl, r.Account, false), nil
}
