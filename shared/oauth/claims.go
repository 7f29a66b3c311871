package oauth

import (
	"encoding/json"
	"net/url"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// claims are the registered and Entra claims a token is judged on; raw
// keeps every claim for role assignments.
type claims struct {
	Issuer    string           `json:"iss"`
	Subject   string           `json:"sub"`
	Audience  jwt.Audience     `json:"aud"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	Expiry    *jwt.NumericDate `json:"exp"`
	TenantID  string           `json:"tid"`
	ObjectID  string           `json:"oid"`
	AppID     string           `json:"appid"`
	ClientID  string           `json:"client_id"` // Cognito access tokens carry no aud, only client_id
	raw       map[string]any
}

// anySignature lists the algorithms a token may name in basic mode, where
// the signature is not checked; "none" is never accepted.
var anySignature = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512, jose.HS256, jose.HS384, jose.HS512, jose.EdDSA,
}

// parseUnverified reads a compact JWS without checking its signature.
func parseUnverified(token string) (*claims, error) {
	tok, err := jwt.ParseSigned(token, anySignature)
	if err != nil {
		return nil, err
	}
	var c claims
	if err := tok.UnsafeClaimsWithoutVerification(&c, &c.raw); err != nil {
		return nil, err
	}
	return &c, nil
}

// Reasons, as Azure words them in AuthenticationErrorDetail (they come
// from Microsoft.IdentityModel's token validation).
const (
	reasonMalformed   = "The token is not a well-formed JWT."
	reasonAudience    = "Audience validation failed. Audience did not match."
	reasonIssuer      = "Issuer validation failed. Issuer did not match."
	reasonExpired     = "Lifetime validation failed. The token is expired."
	reasonNotYetValid = "Lifetime validation failed. The token is not yet valid."
	reasonNoExpiry    = "Lifetime validation failed. The token is missing an Expiration Time."
	reasonSignature   = "Signature validation failed."
)

// checkLifetime applies nbf and exp with Shared Key's clock skew.
func (c *claims) checkLifetime(now time.Time) string {
	if c.Expiry == nil {
		return reasonNoExpiry
	}
	if now.Add(-auth.MaxClockSkew).After(c.Expiry.Time()) {
		return reasonExpired
	}
	if c.NotBefore != nil && now.Add(auth.MaxClockSkew).Before(c.NotBefore.Time()) {
		return reasonNotYetValid
	}
	return ""
}

// hasAudience reports whether the token is for one of the audiences. A
// token without aud (a Cognito access token) is matched on client_id.
func (c *claims) hasAudience(accepted []string) bool {
	auds := []string(c.Audience)
	if len(auds) == 0 && c.ClientID != "" {
		auds = []string{c.ClientID}
	}
	// A trailing slash does not matter: Azure takes https://storage.azure.com
	// and https://storage.azure.com/ alike.
	for _, a := range auds {
		a = strings.TrimSuffix(a, "/")
		for _, want := range accepted {
			if want != "" && a == strings.TrimSuffix(want, "/") {
				return true
			}
		}
	}
	return false
}

// principalName names the subject for logs: the Entra object id, else the
// application id, else sub, else client_id.
func (c *claims) principalName() string {
	switch {
	case c.ObjectID != "":
		return "oid:" + c.ObjectID
	case c.AppID != "":
		return "appid:" + c.AppID
	case c.Subject != "":
		return "sub:" + c.Subject
	case c.ClientID != "":
		return "client_id:" + c.ClientID
	}
	return "unknown"
}

// hasClaim reports whether the claim name holds value, or holds a list
// with value in it (groups, roles).
func (c *claims) hasClaim(name, value string) bool {
	switch v := c.raw[name].(type) {
	case string:
		return v == value
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok && s == value {
				return true
			}
		}
	case json.Number:
		return v.String() == value
	case float64, bool:
		b, _ := json.Marshal(v)
		return string(b) == value
	}
	return false
}

// StorageResourceID is the application id of Azure Storage, a token
// audience Azure accepts besides https://storage.azure.com.
const StorageResourceID = "e406a681-f3d4-42a8-90b6-c2b029497af1"

// StorageAudience is the resource the SDKs ask a token for by default
// (scope "https://storage.azure.com/.default").
const StorageAudience = "https://storage.azure.com"

// tableEndpointSuffixes are the clouds' Table endpoint domains, for an
// audience naming the account's own endpoint: public, China, US
// Government, and the retired Azure Germany cloud (table.core.cloudapi.de),
// whose tokens Azurite's OAuth tests also accept (Azure/Azurite
// tests/table/auth/oauth.test.ts, "Should work with valid audiences").
var tableEndpointSuffixes = []string{
	".table.core.windows.net", ".table.core.chinacloudapi.cn", ".table.core.usgovcloudapi.net",
	".table.core.cloudapi.de",
}

// storageAudiences are the audiences Azure accepts for account: the storage
// resource in its forms and the account's own endpoint, in Azure's form and
// as the client addressed this server.
func storageAudiences(account, endpoint string) []string {
	auds := []string{StorageAudience, StorageResourceID}
	for _, s := range tableEndpointSuffixes {
		auds = append(auds, "https://"+account+s)
	}
	if endpoint != "" {
		auds = append(auds, endpoint)
	}
	return auds
}

// entraHosts are the Microsoft Entra token issuer hosts of every cloud
// (public, US Government, China, the retired Germany cloud, and the
// pre-production one the emulator also accepts), each with the login host
// of its authorization_uri.
var entraHosts = map[string]string{
	"sts.windows.net":                  "login.microsoftonline.com",
	"login.microsoftonline.com":        "login.microsoftonline.com",
	"login.windows.net":                "login.microsoftonline.com",
	"login.microsoftonline.us":         "login.microsoftonline.us",
	"sts.chinacloudapi.cn":             "login.chinacloudapi.cn",
	"login.chinacloudapi.cn":           "login.chinacloudapi.cn",
	"login.partner.microsoftonline.cn": "login.partner.microsoftonline.cn",
	"sts.microsoftonline.de":           "login.microsoftonline.de",
	"login.microsoftonline.de":         "login.microsoftonline.de",
	"sts.windows-ppe.net":              "login.windows-ppe.net",
	"login.windows-ppe.net":            "login.windows-ppe.net",
}

// entraIssuer recognizes "https://<host>/<tenant>/" (v1 tokens) and
// "https://<host>/<tenant>/v2.0" (v2 tokens) and returns the login host
// and the tenant.
func entraIssuer(iss string) (loginHost, tenant string, ok bool) {
	u, err := url.Parse(iss)
	if err != nil || u.Scheme != "https" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", "", false
	}
	loginHost, ok = entraHosts[strings.ToLower(u.Host)]
	if !ok {
		return "", "", false
	}
	rest := strings.TrimPrefix(u.Path, "/")
	tenant, version, found := strings.Cut(rest, "/")
	if !found || !isGUID(tenant) || (version != "" && version != "v2.0") {
		return "", "", false
	}
	return loginHost, tenant, true
}

// isGUID reports whether s is a GUID in its 8-4-4-4-12 hex form, as Entra
// writes tenant ids in issuers.
func isGUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// bearerChallenge is Azure's WWW-Authenticate value: where to sign in, and
// the resource a token must be for.
func bearerChallenge(authorizationURI, resource string) string {
	return "Bearer authorization_uri=" + authorizationURI + " resource_id=" + resource
}

// entraAuthorizeURI is a Microsoft Entra tenant's authorize endpoint, as
// Azure names it in its challenge.
func entraAuthorizeURI(loginHost, tenant string) string {
	return "https://" + loginHost + "/" + tenant + "/oauth2/authorize"
}
