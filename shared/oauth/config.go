package oauth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// Config is the bearer token configuration, as JSON:
//
//	{
//	  "issuers":   ["https://sts.windows.net/<tenant>/", "https://cognito-idp.<region>.amazonaws.com/<pool>"],
//	  "audiences": ["https://storage.azure.com", "<cognito app client id>"],
//	  "roles": [
//	    {"claim": "oid",    "value": "<object id>", "role": "contributor", "account": "myaccount"},
//	    {"claim": "groups", "value": "<group id>",  "role": "reader",      "account": "*"},
//	    {"claim": "sub",    "value": "<sub>",       "role": "contributor", "account": "myaccount", "table": "orders",
//	     "issuer": "https://cognito-idp.<region>.amazonaws.com/<pool>"}
//	  ]
//	}
//
// Issuers and Audiences matter in verified mode only (basic mode accepts
// Microsoft Entra issuers and the storage audiences); an empty Audiences
// accepts the storage audiences.
type Config struct {
	Issuers   []string     `json:"issuers"`
	Audiences []string     `json:"audiences"`
	Roles     []Assignment `json:"roles"`
}

// Assignment gives the principals whose claim Claim holds Value (or, for a
// list claim such as groups or roles, contains it) the role Role over
// Account ("*": every account), or only over its table Table. Issuer, when
// set, limits the assignment to tokens of that issuer, so a sub of one
// issuer cannot match another's.
type Assignment struct {
	Issuer  string `json:"issuer,omitempty"`
	Claim   string `json:"claim"`
	Value   string `json:"value"`
	Role    string `json:"role"`
	Account string `json:"account"`
	Table   string `json:"table,omitempty"`

	role auth.Role
}

// ParseConfig reads and checks a JSON configuration.
func ParseConfig(data []byte) (*Config, error) {
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("oauth: configuration: %w", err)
	}
	if err := c.check(); err != nil {
		return nil, err
	}
	return &c, nil
}

// LoadConfig reads a JSON configuration file.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	return ParseConfig(b)
}

// ParseRole reads a role name: reader or contributor, or Azure's names of
// the equivalent built-in roles.
func ParseRole(s string) (auth.Role, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "reader", "storage table data reader":
		return auth.RoleReader, nil
	case "contributor", "storage table data contributor":
		return auth.RoleContributor, nil
	}
	return auth.RoleNone, fmt.Errorf("oauth: role %q: want reader or contributor", s)
}

// check validates every field and reports every problem at once.
func (c *Config) check() error {
	var errs []error
	for _, iss := range c.Issuers {
		if err := checkIssuerURL(iss); err != nil {
			errs = append(errs, err)
		}
	}
	for i := range c.Roles {
		a := &c.Roles[i]
		r, err := ParseRole(a.Role)
		if err != nil {
			errs = append(errs, fmt.Errorf("roles[%d]: %w", i, err))
		}
		a.role = r
		if a.Claim == "" || a.Value == "" {
			errs = append(errs, fmt.Errorf("oauth: roles[%d]: claim and value are required", i))
		}
		// An account name is lower case; any case names the same account.
		a.Account = strings.ToLower(a.Account)
		if a.Account == "" {
			errs = append(errs, fmt.Errorf(`oauth: roles[%d]: account is required ("*" for every account)`, i))
		}
		if a.Table != "" && a.Account == "*" {
			errs = append(errs, fmt.Errorf("oauth: roles[%d]: a table role names its account", i))
		}
	}
	return errors.Join(errs...)
}

// checkIssuerURL requires https, except for an issuer on a loopback
// address (a test or development issuer on this machine).
func checkIssuerURL(iss string) error {
	u, err := url.Parse(iss)
	if err != nil || u.Host == "" {
		return fmt.Errorf("oauth: issuer %q is not a URL", iss)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("oauth: issuer %q must be https (http only on loopback)", iss)
}

// grant computes what the claims allow in account. With no assignments
// configured, allowAll decides: basic mode gives contributor everywhere.
func (c *Config) grant(cl *claims, account string, allowAll bool) *auth.TokenGrant {
	g := &auth.TokenGrant{Principal: cl.principalName()}
	if len(c.Roles) == 0 {
		if allowAll {
			g.Account = auth.RoleContributor
		}
		return g
	}
	account = strings.ToLower(account) // the request's spelling
	for i := range c.Roles {
		a := &c.Roles[i]
		if a.Account != "*" && a.Account != account {
			continue
		}
		if a.Issuer != "" && a.Issuer != cl.Issuer {
			continue
		}
		if !cl.hasClaim(a.Claim, a.Value) {
			continue
		}
		if a.Table == "" {
			g.Account = max(g.Account, a.role)
			continue
		}
		if g.Tables == nil {
			g.Tables = make(map[string]auth.Role)
		}
		t := strings.ToLower(a.Table)
		g.Tables[t] = max(g.Tables[t], a.role)
	}
	return g
}
