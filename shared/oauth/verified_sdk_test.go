package oauth_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/internal/testissuer"
	"github.com/tablebridge/tablebridge/shared/oauth"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// TestVerifiedMode runs its own OpenID issuers on loopback (discovery,
// JWKS, generated RS256 and ES256 keys, a key rotation) and drives the Go
// SDK with a TokenCredential over HTTPS against the real handler in
// verified mode, on both stores: what each role may and may not do, and
// every refusal.
func TestVerifiedMode(t *testing.T) {
	t.Parallel()
	forEachStore(t, testVerifiedMode)
}

func testVerifiedMode(t *testing.T, storeOpts []tablebridgetest.Option) {
	rsa1, ec1 := testissuer.NewKey(t, jose.RS256), testissuer.NewKey(t, jose.ES256)
	iss := testissuer.New(t, rsa1, ec1)
	otherKey := testissuer.NewKey(t, jose.RS256)
	other := testissuer.New(t, otherKey)
	orders := protocoltest.TableName(t, "orders")
	cfg, err := oauth.ParseConfig([]byte(fmt.Sprintf(`{
		"issuers": [%q, %q],
		"audiences": ["api://tablebridge", "https://storage.azure.com"],
		"roles": [
			{"claim": "oid", "value": "writer", "role": "contributor", "account": "devstoreaccount1"},
			{"claim": "groups", "value": "readers", "role": "Storage Table Data Reader", "account": "*"},
			{"claim": "sub", "value": "orders-writer", "role": "contributor", "account": "devstoreaccount1", "table": %q},
			{"claim": "roles", "value": "Tables.Read", "role": "reader", "account": "otheraccount"},
			{"issuer": %q, "claim": "sub", "value": "other-sub", "role": "contributor", "account": "*"}
		]}`, iss.URL, other.URL, strings.ToUpper(orders), other.URL)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := oauth.NewVerified(cfg, oauth.VerifiedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	advanceKeyClock := oauth.MoveKeyClock(v)
	srv := protocoltest.New(t, append(storeOpts, tablebridgetest.WithTLS(), tablebridgetest.WithTokenVerifier(v))...)
	keyClient := srv.Client()
	elsewhere := protocoltest.TableName(t, "elsewhere")
	for _, name := range []string{orders, elsewhere} {
		if _, err := keyClient.CreateTable(t.Context(), name, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := keyClient.NewClient(name).AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"seed"}`), nil); err != nil {
			t.Fatal(err)
		}
	}
	client := func(token string) *aztables.ServiceClient {
		return srv.TokenServiceClient(t, devAccount, credential(token))
	}
	insert := func(sc *aztables.ServiceClient, table, rk string) error {
		_, err := sc.NewClient(table).AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"`+rk+`"}`), nil)
		return err
	}
	denied := func(t *testing.T, err error) {
		t.Helper()
		wantRefusal(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch", "", "")
	}

	for _, key := range []*testissuer.Key{rsa1, ec1} {
		t.Run("Contributor"+string(key.Alg), func(t *testing.T) {
			sc := client(iss.Token(t, key, testissuer.Claims{"oid": "writer", "aud": "api://tablebridge"}))
			name := protocoltest.TableName(t, "")
			if _, err := sc.CreateTable(t.Context(), name, nil); err != nil {
				t.Fatal(err)
			}
			if err := insert(sc, name, "r"); err != nil {
				t.Fatal(err)
			}
			if _, err := sc.NewClient(name).DeleteEntity(t.Context(), "p", "r", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := sc.DeleteTable(t.Context(), name, nil); err != nil {
				t.Fatal(err)
			}
		})
	}

	t.Run("ReaderReadsOnly", func(t *testing.T) {
		sc := client(iss.Token(t, ec1, testissuer.Claims{"groups": []string{"staff", "readers"}}))
		if _, err := sc.NewClient(orders).GetEntity(t.Context(), "p", "seed", nil); err != nil {
			t.Fatal(err)
		}
		if page, err := sc.NewListTablesPager(nil).NextPage(t.Context()); err != nil || len(page.Tables) < 2 {
			t.Fatalf("list tables: %v", err)
		}
		denied(t, insert(sc, orders, "byReader"))
		_, err := sc.CreateTable(t.Context(), protocoltest.TableName(t, ""), nil)
		denied(t, err)
		_, err = sc.NewClient(orders).DeleteEntity(t.Context(), "p", "seed", nil)
		denied(t, err)
		_, err = sc.DeleteTable(t.Context(), orders, nil)
		denied(t, err)
		// A batch is authorized operation by operation.
		_, err = sc.NewClient(orders).SubmitTransaction(t.Context(), []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"batch"}`)}}, nil)
		if err == nil || !strings.Contains(err.Error(), "AuthorizationPermissionMismatch") {
			t.Errorf("batch by a reader: %v", err)
		}
	})

	t.Run("TableScopedContributor", func(t *testing.T) {
		sc := client(iss.Token(t, rsa1, testissuer.Claims{"sub": "orders-writer"}))
		if err := insert(sc, orders, "scoped"); err != nil {
			t.Fatal(err)
		}
		if _, err := sc.NewClient(orders).GetEntity(t.Context(), "p", "scoped", nil); err != nil {
			t.Fatal(err)
		}
		denied(t, insert(sc, elsewhere, "scoped"))
		_, err := sc.NewClient(elsewhere).GetEntity(t.Context(), "p", "seed", nil)
		denied(t, err)
		// Its own table's metadata is readable by name (Get Table), another's
		// is not.
		scoped := iss.Token(t, rsa1, testissuer.Claims{"sub": "orders-writer"})
		if resp := rawBearer(t, srv, http.MethodGet, "/Tables('"+orders+"')", scoped); resp.StatusCode != http.StatusOK {
			t.Errorf("Get Table of its table: %d %s", resp.StatusCode, resp.Body)
		}
		if resp := rawBearer(t, srv, http.MethodGet, "/Tables('"+elsewhere+"')", scoped); resp.StatusCode != http.StatusForbidden ||
			resp.Header.Get("x-ms-error-code") != "AuthorizationPermissionMismatch" {
			t.Errorf("Get Table of another table: %d %s", resp.StatusCode, resp.Body)
		}
		// Listing tables and creating one need a role on the account.
		_, err = sc.NewListTablesPager(nil).NextPage(t.Context())
		denied(t, err)
		_, err = sc.CreateTable(t.Context(), protocoltest.TableName(t, ""), nil)
		denied(t, err)
	})

	t.Run("NoRoleHere", func(t *testing.T) {
		for name, c := range map[string]testissuer.Claims{
			"Unassigned":          {"oid": "nobody"},
			"OtherAccountsRole":   {"roles": []string{"Tables.Read"}},
			"OtherIssuersSubject": {"sub": "other-sub"},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := client(iss.Token(t, rsa1, c)).NewClient(orders).GetEntity(t.Context(), "p", "seed", nil)
				denied(t, err)
			})
		}
	})

	t.Run("SecondIssuer", func(t *testing.T) {
		if err := insert(client(other.Token(t, otherKey, testissuer.Claims{"sub": "other-sub"})), orders, "second"); err != nil {
			t.Fatal(err)
		}
	})

	challenge := "Bearer authorization_uri=" + iss.URL + " resource_id=api://tablebridge"
	forged := testissuer.NewKey(t, jose.RS256)
	forged.ID = rsa1.ID
	stranger := testissuer.New(t, testissuer.NewKey(t, jose.RS256))
	strangerKey := testissuer.NewKey(t, jose.RS256)
	stranger.SetKeys(strangerKey)
	refused := []struct {
		name   string
		token  func(t *testing.T) string
		reason string
	}{
		{"WrongAudience", func(t *testing.T) string {
			return iss.Token(t, rsa1, testissuer.Claims{"oid": "writer", "aud": "api://something-else"})
		}, "Audience validation failed. Audience did not match."},
		{"Expired", func(t *testing.T) string {
			return iss.Token(t, rsa1, testissuer.Claims{"oid": "writer", "exp": time.Now().Add(-20 * time.Minute).Unix()})
		}, "Lifetime validation failed. The token is expired."},
		{"NotYetValid", func(t *testing.T) string {
			return iss.Token(t, rsa1, testissuer.Claims{"oid": "writer", "nbf": time.Now().Add(20 * time.Minute).Unix()})
		}, "Lifetime validation failed. The token is not yet valid."},
		{"ForgedSignature", func(t *testing.T) string {
			return iss.Token(t, forged, testissuer.Claims{"oid": "writer"})
		}, "Signature validation failed."},
		{"UnknownKeyID", func(t *testing.T) string {
			return iss.Token(t, testissuer.NewKey(t, jose.ES256), testissuer.Claims{"oid": "writer"})
		}, "Signature validation failed."},
	}
	for _, tc := range refused {
		t.Run("Refuses"+tc.name, func(t *testing.T) {
			_, err := client(tc.token(t)).NewClient(orders).AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"refused"}`), nil)
			wantRefusal(t, err, http.StatusUnauthorized, "InvalidAuthenticationInfo", tc.reason, challenge)
		})
	}
	t.Run("RefusesUnconfiguredIssuer", func(t *testing.T) {
		_, err := client(stranger.Token(t, strangerKey, testissuer.Claims{"oid": "writer"})).NewClient(orders).GetEntity(t.Context(), "p", "seed", nil)
		wantRefusal(t, err, http.StatusUnauthorized, "InvalidAuthenticationInfo", "Issuer validation failed. Issuer did not match.", challenge)
	})
	t.Run("RefusedWritesChangedNothing", func(t *testing.T) {
		if _, err := keyClient.NewClient(orders).GetEntity(t.Context(), "p", "refused", nil); err == nil {
			t.Error("a refused insert was stored")
		}
	})

	// Fetch counting is TestKeySetFetches'; here a rotation seen through
	// the SDK, with the key sets' clock moved past the refresh interval.
	t.Run("KeyRotation", func(t *testing.T) {
		writerToken := func(k *testissuer.Key) string { return iss.Token(t, k, testissuer.Claims{"oid": "writer"}) }
		rsa2 := testissuer.NewKey(t, jose.RS256)
		iss.SetKeys(rsa2, ec1)
		advanceKeyClock(oauth.DefaultKeyRefresh)
		if err := insert(client(writerToken(rsa2)), orders, "rotated"); err != nil {
			t.Fatalf("token of the new key: %v", err)
		}
		// The retired key no longer verifies; the kept one still does.
		err := insert(client(writerToken(rsa1)), orders, "retired")
		wantRefusal(t, err, http.StatusUnauthorized, "InvalidAuthenticationInfo", "Signature validation failed.", challenge)
		if err := insert(client(writerToken(ec1)), orders, "kept"); err != nil {
			t.Errorf("token of the key kept across the rotation: %v", err)
		}
	})
}

// TestVerifiedIssuerDown: while an issuer's discovery document or keys
// cannot be had (a 500, or a body that is not JSON), a valid token is
// answered 503 ServerBusy, which the SDKs retry, and nothing is written.
func TestVerifiedIssuerDown(t *testing.T) {
	t.Parallel()
	for _, part := range []string{"Discovery", "Keys"} {
		for fault, faultName := range map[testissuer.Fault]string{testissuer.ServerError: "ServerError", testissuer.BadJSON: "BadJSON"} {
			t.Run(part+faultName, func(t *testing.T) {
				key := testissuer.NewKey(t, jose.ES256)
				iss := testissuer.New(t, key)
				if part == "Discovery" {
					iss.SetDiscoveryFault(fault)
				} else {
					iss.SetKeysFault(fault)
				}
				cfg, err := oauth.ParseConfig([]byte(fmt.Sprintf(`{"issuers": [%q],
					"roles": [{"claim": "oid", "value": "writer", "role": "contributor", "account": "*"}]}`, iss.URL)))
				if err != nil {
					t.Fatal(err)
				}
				v, err := oauth.NewVerified(cfg, oauth.VerifiedOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if err := v.Discover(t.Context()); err == nil {
					t.Error("Discover reported no failure")
				}
				srv := protocoltest.New(t, tablebridgetest.WithTLS(), tablebridgetest.WithTokenVerifier(v))
				name := protocoltest.TableName(t, "")
				if _, err := srv.Client().CreateTable(t.Context(), name, nil); err != nil {
					t.Fatal(err)
				}
				sc := srv.TokenServiceClient(t, devAccount, credential(iss.Token(t, key, testissuer.Claims{"oid": "writer"})))
				_, err = sc.NewClient(name).AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
				wantRefusal(t, err, http.StatusServiceUnavailable, "ServerBusy", "", "")
				if _, err := srv.Client().NewClient(name).GetEntity(t.Context(), "p", "r", nil); err == nil {
					t.Error("an insert answered 503 was stored")
				}
			})
		}
	}
}
