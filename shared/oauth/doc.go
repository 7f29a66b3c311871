// Package oauth verifies OAuth 2.0 bearer tokens ("Authorization: Bearer
// <JWT>") for the Table service, the way Azure Storage accepts Microsoft
// Entra ID tokens, and maps them to roles (auth.TokenGrant). It implements
// auth.TokenVerifier in two modes:
//
//   - Basic (NewBasic), for local development, what the Azure storage
//     emulator offers: a well-formed JWT is accepted when its audience is a
//     storage audience (https://storage.azure.com with or without the
//     trailing slash, the storage resource id
//     e406a681-f3d4-42a8-90b6-c2b029497af1, or the account's own table
//     endpoint), its issuer a Microsoft Entra issuer of any cloud
//     (https://sts.windows.net/<tenant>/,
//     https://login.microsoftonline.com/<tenant>/v2.0, ...), and its nbf and
//     exp hold within auth.MaxClockSkew, the skew Shared Key allows. The
//     signature is NOT checked: anyone can mint such a token. The token is
//     parsed with go-jose's unverified parse, never by hand.
//   - Verified (NewVerified), for AWS and anything exposed: the signature is
//     checked with the issuer's published keys (OpenID discovery through
//     github.com/coreos/go-oidc/v3; the JWKS is cached and fetched again
//     when a token names a key id it does not hold, as after a rotation,
//     at most once per KeyRefresh, so forged tokens cannot make the server
//     hammer the issuer), RS256 or ES256 (go-jose verifies), for configured
//     issuers and audiences, with the same claim checks as basic mode.
//
// A refused token gets Azure's answer: 401 InvalidAuthenticationInfo with
// the reason as AuthenticationErrorDetail ("Audience validation failed.
// Audience did not match.", "Issuer validation failed. Issuer did not
// match.", "Lifetime validation failed. The token is expired.", ...) and
// "WWW-Authenticate: Bearer authorization_uri=https://login.microsoftonline.com/<tenant>/oauth2/authorize resource_id=https://storage.azure.com".
// The same challenge (Challenge) answers a request without credentials,
// so that clients can discover the tenant and resource: an Entra issuer is
// named by its tenant's authorize endpoint, another OIDC issuer by its
// identifier, and the resource is the first configured audience or the
// storage resource.
//
// What a token may do is configuration (Config.Roles): role assignments
// that match a claim of the token (oid, sub, appid, groups, roles, or any
// other claim) to the reader or contributor role over an account ("*" for
// every account) or one table of it. Basic mode without assignments gives
// every accepted token the contributor role everywhere, as the emulator
// does; verified mode requires assignments.
package oauth
