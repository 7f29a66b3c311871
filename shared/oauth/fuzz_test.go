package oauth

import (
	"context"
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
		c, perr := parseUnverified(token)
		if perr != nil {
			t.Fatalf("accepted a token that does not parse: %v", perr)
		}
		if reason := c.check(now, storageAudiences(r.Account, r.Endpoint)); reason != "" {
			t.Fatalf("accepted a token that fails %q", reason)
		}
		if _, _, ok := entraIssuer(c.Issuer); !ok || g.Account != auth.RoleContributor {
			t.Fatalf("accepted issuer %q, grant %+v", c.Issuer, g)
		}
	})
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
