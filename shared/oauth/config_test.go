package oauth

import (
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/auth"
)

func TestParseConfigRefuses(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ json, want string }{
		"not JSON":            {`{`, "configuration"},
		"unknown field":       {`{"issuer": "https://x"}`, "unknown field"},
		"unknown role":        {`{"roles": [{"claim": "oid", "value": "v", "role": "owner", "account": "a"}]}`, "owner"},
		"no claim":            {`{"roles": [{"value": "v", "role": "reader", "account": "a"}]}`, "claim and value"},
		"no account":          {`{"roles": [{"claim": "oid", "value": "v", "role": "reader"}]}`, "account is required"},
		"table of every":      {`{"roles": [{"claim": "oid", "value": "v", "role": "reader", "account": "*", "table": "t"}]}`, "names its account"},
		"http issuer":         {`{"issuers": ["http://issuer.example.com"]}`, "must be https"},
		"issuer not a URL":    {`{"issuers": ["sts.windows.net"]}`, "not a URL"},
		"every problem named": {`{"issuers": ["http://x.example"], "roles": [{"claim": "oid", "value": "v", "role": "x", "account": "a"}]}`, "must be https"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

// TestGrant: assignments add up to the highest role per account and table,
// and match only their account, issuer and claim.
func TestGrant(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig([]byte(`{"issuers": ["http://127.0.0.1:1", "http://localhost:2"], "roles": [
		{"claim": "oid", "value": "u", "role": "reader", "account": "*"},
		{"claim": "groups", "value": "g", "role": "Storage Table Data Contributor", "account": "acct"},
		{"claim": "oid", "value": "u", "role": "contributor", "account": "acct", "table": "Orders"},
		{"claim": "oid", "value": "u", "role": "contributor", "account": "other"},
		{"claim": "oid", "value": "u", "role": "contributor", "account": "acct", "issuer": "http://localhost:2"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	user := &claims{Issuer: "http://127.0.0.1:1", ObjectID: "u", raw: map[string]any{"oid": "u"}}
	g := cfg.grant(user, "acct", false)
	if g.Account != auth.RoleReader || g.Tables["orders"] != auth.RoleContributor || g.Principal != "oid:u" {
		t.Errorf("user grant %+v", g)
	}
	member := &claims{Subject: "s", raw: map[string]any{"groups": []any{"x", "g"}}}
	if g := cfg.grant(member, "acct", false); g.Account != auth.RoleContributor || g.Principal != "sub:s" {
		t.Errorf("group member grant %+v", g)
	}
	if g := cfg.grant(member, "elsewhere", false); g.Account != auth.RoleNone {
		t.Errorf("group member elsewhere %+v", g)
	}
	if g := (&Config{}).grant(user, "acct", true); g.Account != auth.RoleContributor {
		t.Errorf("basic mode without roles %+v", g)
	}
	if g := (&Config{}).grant(user, "acct", false); g.Account != auth.RoleNone {
		t.Errorf("verified mode without roles %+v", g)
	}
}

// TestBasicConfigLiteral: a Config built in code is checked by NewBasic, so
// its Roles grant, and an account matches in any case, on either side.
func TestBasicConfigLiteral(t *testing.T) {
	t.Parallel()
	b, err := NewBasic(&Config{Roles: []Assignment{{Claim: "oid", Value: "u", Role: "Contributor", Account: "MyAccount"}}})
	if err != nil {
		t.Fatal(err)
	}
	user := &claims{ObjectID: "u", raw: map[string]any{"oid": "u"}}
	for _, account := range []string{"myaccount", "MYACCOUNT"} {
		if g := b.cfg.grant(user, account, true); g.Account != auth.RoleContributor {
			t.Errorf("grant in %s: %+v", account, g)
		}
	}
	if g := b.cfg.grant(user, "other", true); g.Account != auth.RoleNone {
		t.Errorf("grant in another account: %+v", g)
	}
	if _, err := NewBasic(&Config{Roles: []Assignment{{Claim: "oid", Value: "u", Role: "owner", Account: "a"}}}); err == nil {
		t.Error("NewBasic took an unknown role")
	}
}
