package oauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// FuzzBasicVerifyToken: any Authorization value is answered without a
// panic, and a token is accepted only when its claims pass every check.
func FuzzBasicVerifyToken(f *testing.F) {
	// {"alg":"HS256","typ":"JWT"} . {"aud":"https://storage.azure.com","iss":"https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/","exp":4102444800}
	f.Add("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJhdWQiOiJodHRwczovL3N0b3JhZ2UuYXp1cmUuY29tIiwiaXNzIjoiaHR0cHM6Ly9zdHMud2luZG93cy5uZXQvNzJmOTg4YmYtODZmMS00MWFmLTkxYWItMmQ3Y2QwMTFkYjQ3LyIsImV4cCI6NDEwMjQ0NDgwMH0.c2ln")
	f.Add("a.b.c")
	f.Add("")
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b, err := NewBasic(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, token string) {
		r := &auth.Request{Account: "devstoreaccount1", Endpoint: "https://127.0.0.1:10002/devstoreaccount1", Now: now}
		g, err := b.VerifyToken(context.Background(), token, r)
		if err != nil {
			if ae, ok := err.(interface{ HTTPStatus() int }); !ok || ae.HTTPStatus() != 401 {
				t.Fatalf("refusal %v is not a 401", err)
			}
			return
		}
		if g.Account != auth.RoleContributor {
			t.Fatalf("accepted, grant %+v", g)
		}
		checkAcceptedIndependently(t, token)
	})
}

// checkAcceptedIndependently decodes an accepted token's payload with
// encoding/base64 and encoding/json, not with the code under test, and
// requires an exp at most the 15-minute clock skew before 2026-01-01, an
// aud (or, without one, client_id) among the audiences a token for
// devstoreaccount1 may have, and an issuer on a Microsoft Entra host.
func checkAcceptedIndependently(t *testing.T, token string) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("accepted a token of %d parts", len(parts))
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("accepted a token whose payload is not base64url: %v", err)
	}
	var c map[string]any
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatalf("accepted a token whose payload is not a JSON object: %v", err)
	}
	const earliestExp = 1767225600 - 15*60 // 2026-01-01T00:00:00Z less the skew
	if exp, ok := c["exp"].(float64); !ok || exp <= earliestExp-1 {
		t.Fatalf("accepted exp %v", c["exp"])
	}
	var auds []any
	switch aud := c["aud"].(type) {
	case string:
		auds = []any{aud}
	case []any:
		auds = aud
	}
	if len(auds) == 0 {
		auds = []any{c["client_id"]}
	}
	accepted := map[string]bool{
		"https://storage.azure.com":                             true,
		"e406a681-f3d4-42a8-90b6-c2b029497af1":                  true,
		"https://devstoreaccount1.table.core.windows.net":       true,
		"https://devstoreaccount1.table.core.chinacloudapi.cn":  true,
		"https://devstoreaccount1.table.core.usgovcloudapi.net": true,
		"https://devstoreaccount1.table.core.cloudapi.de":       true,
		"https://127.0.0.1:10002/devstoreaccount1":              true,
	}
	audOK := false
	for _, a := range auds {
		if s, ok := a.(string); ok && accepted[strings.TrimSuffix(s, "/")] {
			audOK = true
		}
	}
	if !audOK {
		t.Fatalf("accepted aud %v, client_id %v", c["aud"], c["client_id"])
	}
	iss, _ := c["iss"].(string)
	host, _, _ := strings.Cut(strings.TrimPrefix(strings.ToLower(iss), "https://"), "/")
	entraHosts := []string{"sts.windows.net", "login.microsoftonline.com", "login.windows.net", "login.microsoftonline.us",
		"sts.chinacloudapi.cn", "login.chinacloudapi.cn", "login.partner.microsoftonline.cn", "sts.microsoftonline.de",
		"login.microsoftonline.de", "sts.windows-ppe.net", "login.windows-ppe.net"}
	if !strings.HasPrefix(strings.ToLower(iss), "https://") || !slices.Contains(entraHosts, host) {
		t.Fatalf("accepted iss %q", iss)
	}
}

// FuzzEntraIssuer: an accepted issuer is https on an Entra host with a
// GUID tenant.
func FuzzEntraIssuer(f *testing.F) {
	for _, s := range []string{"https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
		"https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0", "https://evil.example/x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, iss string) {
		host, tenant, ok := entraIssuer(iss)
		if !ok {
			return
		}
		if !strings.HasPrefix(strings.ToLower(iss), "https://") || !isGUID(tenant) || host == "" {
			t.Fatalf("accepted %q: host %q tenant %q", iss, host, tenant)
		}
	})
}
