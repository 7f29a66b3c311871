package oauth

import (
	"context"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// Basic is the emulator's basic mode: claims are checked, the signature is
// not. See the package documentation.
type Basic struct {
	cfg *Config
}

// NewBasic returns a basic-mode verifier. cfg may be nil; its Roles, when
// there are any, decide what a token may do, otherwise every accepted token
// is a contributor everywhere. Its Issuers and Audiences are not used. It is
// checked as ParseConfig checks it: a Config built in code needs that for
// its Roles to grant anything.
func NewBasic(cfg *Config) (*Basic, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	return &Basic{cfg: cfg}, nil
}

// defaultChallenge names the multi-tenant authority when the token says
// nothing usable about its tenant, and answers requests without
// credentials: basic mode takes tokens of every tenant.
var defaultChallenge = bearerChallenge(entraAuthorizeURI("login.microsoftonline.com", "common"), StorageAudience)

// Challenge implements auth.TokenVerifier.
func (b *Basic) Challenge() string { return defaultChallenge }

// VerifyToken implements auth.TokenVerifier.
func (b *Basic) VerifyToken(_ context.Context, token string, r *auth.Request) (*auth.TokenGrant, error) {
	cl, err := parseUnverified(token)
	if err != nil {
		return nil, auth.BearerError(defaultChallenge, reasonMalformed)
	}
	challenge := defaultChallenge
	loginHost, tenant, entra := entraIssuer(cl.Issuer)
	if entra {
		challenge = bearerChallenge(entraAuthorizeURI(loginHost, tenant), StorageAudience)
	}
	if reason := cl.check(now(r), storageAudiences(r.Account, r.Endpoint)); reason != "" {
		return nil, auth.BearerError(challenge, reason)
	}
	if !entra {
		return nil, auth.BearerError(challenge, reasonIssuer)
	}
	return b.cfg.grant(cl, r.Account, true), nil
}

// check applies the lifetime, then the audience, the order in which
// Microsoft.IdentityModel validates a token and so the reason Azure gives
// for a token wrong in several ways.
func (c *claims) check(now time.Time, audiences []string) string {
	if reason := c.checkLifetime(now); reason != "" {
		return reason
	}
	if !c.hasAudience(audiences) {
		return reasonAudience
	}
	return ""
}

func now(r *auth.Request) time.Time {
	if r.Now.IsZero() {
		return time.Now()
	}
	return r.Now
}
