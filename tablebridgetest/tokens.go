package tablebridgetest

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	jose "github.com/go-jose/go-jose/v4"
)

// TokenTenant is the Microsoft Entra tenant of the tokens TokenCredential
// mints: an issuer of Entra ID is what basic mode accepts.
const TokenTenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"

// TokenCredential returns an azcore.TokenCredential whose tokens a
// WithBearerTokens server accepts: issued by Entra ID
// (https://sts.windows.net/<TokenTenant>/) for https://storage.azure.com,
// valid for an hour from the server's clock, for the principal with object
// id (oid) principal. claims adds or overrides claims (a nil value removes
// one), e.g. {"roles": ["..."]} for a role assignment of WithBearerTokens,
// or {"exp": ...} for an expired token. On a server without
// WithBearerTokens its tokens fail with ErrNoBearerTokens.
func (s *Server) TokenCredential(principal string, claims map[string]any) azcore.TokenCredential {
	return tokenCredential{s: s, principal: principal, claims: claims}
}

// ErrNoBearerTokens: the server was started without WithBearerTokens.
var ErrNoBearerTokens = errors.New("tablebridgetest: the server does not accept bearer tokens (WithBearerTokens)")

// TokenClient is an aztables client of account that authenticates with
// cred ("Authorization: Bearer"), as an application using Entra ID builds
// it, with ClientOptions.
func (s *Server) TokenClient(account string, cred azcore.TokenCredential) (*aztables.ServiceClient, error) {
	return aztables.NewServiceClient(s.AccountURL(account), cred, s.ClientOptions())
}

type tokenCredential struct {
	s         *Server
	principal string
	claims    map[string]any
}

// GetToken implements azcore.TokenCredential.
func (c tokenCredential) GetToken(_ context.Context, _ policy.TokenRequestOptions) (azcore.AccessToken, error) {
	if c.s.tokenKey == nil {
		return azcore.AccessToken{}, ErrNoBearerTokens
	}
	now := c.s.now()
	exp := now.Add(time.Hour)
	full := map[string]any{
		"iss": "https://sts.windows.net/" + TokenTenant + "/", "aud": "https://storage.azure.com",
		"sub": c.principal, "oid": c.principal, "tid": TokenTenant,
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": exp.Unix(),
	}
	for name, v := range c.claims {
		if v == nil {
			delete(full, name)
		} else {
			full[name] = v
		}
	}
	payload, err := json.Marshal(full)
	if err != nil {
		return azcore.AccessToken{}, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: c.s.tokenKey}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return azcore.AccessToken{}, err
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return azcore.AccessToken{}, err
	}
	token, err := jws.CompactSerialize()
	if err != nil {
		return azcore.AccessToken{}, err
	}
	return azcore.AccessToken{Token: token, ExpiresOn: exp}, nil
}
