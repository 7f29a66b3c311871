package auth

import (
	"context"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// Role is what a bearer token's principal may do in an account or a table:
// the equivalents of Azure's built-in roles "Storage Table Data Reader"
// (query tables, read entities) and "Storage Table Data Contributor" (also
// create and delete tables, and write and delete entities). shared/operation
// is the single place roles are defined; this alias lets callers of the
// verifier name them without importing it.
type Role = operation.Role

// Roles, in increasing order of what they allow.
const (
	RoleNone        = operation.RoleNone
	RoleReader      = operation.RoleReader
	RoleContributor = operation.RoleContributor
)

// TokenGrant is what a verified bearer token allows in the account the
// request addresses.
type TokenGrant struct {
	// Principal names the token's subject for logs ("oid:...", "sub:..."),
	// never the token.
	Principal string
	// Account is the role over the whole account: every table, Query
	// Tables and Create Table.
	Account Role
	// Tables holds roles over single tables, keyed by lower-cased name
	// (table names are case-insensitive). They add to Account.
	Tables map[string]Role
}

// TokenVerifier checks an "Authorization: Bearer" token and says what it
// grants in r.Account. A refusal is an *apierr.Error, normally made with
// BearerError so it carries Azure's 401 and WWW-Authenticate challenge.
// Challenge is that challenge for a request that carries no credentials
// at all ("Bearer authorization_uri=... resource_id=..."): what a client
// that discovers its tenant from the service signs in with.
// Implementations live in shared/oauth.
type TokenVerifier interface {
	VerifyToken(ctx context.Context, token string, r *Request) (*TokenGrant, error)
	Challenge() string
}

// VerifierOption configures NewVerifier.
type VerifierOption func(*Verifier)

// WithTokens accepts bearer tokens checked by tv beside Shared Key and SAS.
// Without it a bearer token is refused as an unsupported scheme.
func WithTokens(tv TokenVerifier) VerifierOption {
	return func(v *Verifier) { v.tokens = tv }
}

// bearerMinVersion is the first x-ms-version that accepts OAuth tokens
// ("Authorize with Microsoft Entra ID": version 2017-11-09 or later).
const bearerMinVersion = "2017-11-09"

const schemeNameBearer = "Bearer"

// BearerError is Azure's answer to a token that fails validation: 401
// InvalidAuthenticationInfo, "Please refer to the information in the
// www-authenticate header", the reason as AuthenticationErrorDetail (for
// example "Lifetime validation failed. The token is expired.") and the
// challenge "Bearer authorization_uri=... resource_id=...".
func BearerError(challenge, detail string) *apierr.Error {
	return &apierr.Error{
		Code:      apierr.InvalidAuthenticationInfo,
		Status:    401,
		Message:   "Server failed to authenticate the request. Please refer to the information in the www-authenticate header.",
		Detail:    detail,
		Challenge: challenge,
	}
}

// authenticateBearer checks the transport and version rules Azure applies
// before it looks at a token, then hands the token to the TokenVerifier.
func (v *Verifier) authenticateBearer(ctx context.Context, acct *accountEntry, r *Request, token string) (*Principal, error) {
	if v.tokens == nil {
		return nil, authFailed("Authentication scheme Bearer is not supported.")
	}
	if !r.HTTPS {
		// Azure answers a token sent in clear text with 403; the token
		// must be considered leaked.
		return nil, authFailed("Authentication scheme Bearer is not allowed with HTTP.")
	}
	if !bearerVersion(r) {
		return nil, authFailed("Authentication scheme Bearer is not supported in this version.")
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, apierr.Newf(apierr.InvalidAuthenticationInfo, "The Authorization header must be %q.", "Bearer token")
	}
	g, err := v.tokens.VerifyToken(ctx, token, r)
	if err != nil {
		return nil, err
	}
	return &Principal{account: acct.name, scheme: SchemeBearer, token: g}, nil
}

// bearerVersion reports whether r's x-ms-version takes bearer tokens; a
// request that names none gets the service's default version, which does.
func bearerVersion(r *Request) bool {
	ver := r.Header.Get("X-Ms-Version")
	return ver == "" || ver >= bearerMinVersion
}

// noCredentials is the answer to a request that carries neither an
// Authorization header nor a SAS. Where a bearer token would be taken (the
// verifier accepts tokens, the request came over HTTPS, its version takes
// them) it is Azure's 401 NoAuthenticationInformation with the challenge
// the Azure SDKs discover their tenant and resource from and sign in with:
// TableAsyncClientTest.createTableWithMultipleTenants
// (Azure/azure-sdk-for-java,
// sdk/tables/azure-data-tables/src/test/resources/session-records) and
// EnableTenantDiscoveryLiveTests(StorageAAD)/EnableTenantDiscoveryDoesNotFailAuth
// (Azure/azure-sdk-for-net, sdk/tables/Azure.Data.Tables/tests/SessionRecords).
// Elsewhere no token can sign the request in, and the answer is Azure's
// where it takes none: 403 AuthenticationFailed without a challenge, as in
// test_challenge_auth.pyTestTableChallengeAuthtest_challenge_auth_unsupported_version
// (Azure/azure-sdk-for-python,
// sdk/tables/azure-data-tables/tests/recordings), the nearest recording:
// every Azure storage account accepts Entra ID, so none records an
// anonymous request to one that does not.
func (v *Verifier) noCredentials(r *Request) *apierr.Error {
	if v.tokens != nil && r.HTTPS && bearerVersion(r) {
		return &apierr.Error{Code: apierr.NoAuthenticationInformation, Challenge: v.tokens.Challenge()}
	}
	return authFailed("The request carries neither an Authorization header nor a shared access signature.")
}

// authorizeToken refuses with 403 AuthorizationPermissionMismatch, what
// Azure answers when the token's role assignments lack the data action.
// Query Tables and Create Table (table "") need an account-wide role, as
// in Azure, where a role assigned on one table does not reach the account.
// Operations without a role (the table ACL, the service properties and
// statistics) are not data actions of the Table data roles: Azure's docs
// say only the account owner may call them, so a token is refused whatever
// its role.
func (g *TokenGrant) authorize(op Operation, table string) error {
	need := op.Info().Token
	if need == RoleNone {
		return apierr.Newf(apierr.AuthorizationPermissionMismatch, "A bearer token cannot authorize %s; use Shared Key.", op)
	}
	role := g.Account
	if table != "" {
		if r := g.Tables[strings.ToLower(table)]; r > role {
			role = r
		}
	}
	if role < need {
		return apierr.New(apierr.AuthorizationPermissionMismatch)
	}
	return nil
}
