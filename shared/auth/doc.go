// Package auth authenticates and authorizes Table service requests the way
// Azure Storage does: Shared Key and Shared Key Lite signatures in the
// Authorization header, account SAS and table (service) SAS tokens in the
// query string, stored access policies for table SAS, and the entity key
// ranges a table SAS may carry. Bearer tokens ("Authorization: Bearer",
// Microsoft Entra ID or any OIDC issuer) are accepted when the verifier is
// built WithTokens: a TokenVerifier (shared/oauth) checks the token and
// returns its TokenGrant, reader or contributor roles over the account or
// single tables, which Authorize enforces like Azure's Storage Table Data
// Reader and Contributor roles.
//
// The HTTP layer builds a Request from what it received on the wire and
// calls Verifier.Authenticate once per request. The resulting Principal then
// answers, per operation, whether the request may proceed (Authorize) and,
// per entity, whether a table SAS key range reaches it (AllowsEntity,
// KeyRange). Every refusal is an *apierr.Error carrying the code Azure uses.
//
// What the caller must pass, and why:
//
//   - Request.SignedPath is the path exactly as it arrived, still
//     percent-encoded (the part of the request line before '?'), including an
//     API Gateway stage prefix or custom-domain base path and, for path-style
//     URLs, the account segment. Shared Key signs "/" + account + that path,
//     so a path-style request names the account twice
//     ("/devstoreaccount1/devstoreaccount1/Tables"). Only that spelling is
//     verified: a decoded or re-encoded form of the path is refused, so a
//     signature never covers two wire paths (the entity 'x y', sent as
//     x%20y, and the entity 'x%20y', sent as x%2520y, sign differently).
//   - Request.Method is the verb on the wire (POST for an X-HTTP-Method
//     tunnel), because Shared Key signs the wire verb.
//   - Request.Header must keep x-ms-date intact; a proxy that splits header
//     values on commas breaks every signature.
//   - Request.HTTPS and Request.ClientIP feed the SAS spr and sip checks.
//
// Verification follows the Azure REST reference ("Authorize with Shared
// Key", "Create an account SAS", "Create a service SAS"), and is byte-exact
// with the strings-to-sign of the official SDKs (Go aztables v1.4.1, JS
// @azure/data-tables, Python azure-data-tables, .NET Azure.Data.Tables).
// Where SDKs differ from each other in what they sign, the verifier accepts
// each legitimate form instead of rejecting a real client, as long as no
// two requests for different resources share a string-to-sign; every form
// still requires the account key. SAS fields holding a line break are
// refused for the same reason: the strings-to-sign join fields with line
// breaks.
//
// For clients inside this repository (tests, the load benchmark) the package
// also signs: SignSharedKeyLite, SignSharedKey, NewAccountSAS and NewTableSAS
// produce exactly what the SDKs produce.
package auth
