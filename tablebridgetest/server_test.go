package tablebridgetest_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/oauth"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// roundTrip creates a table through svc and inserts and reads one entity.
func roundTrip(t *testing.T, svc *aztables.ServiceClient, table string) error {
	t.Helper()
	ctx := t.Context()
	if _, err := svc.CreateTable(ctx, table, nil); err != nil {
		return err
	}
	c := svc.NewClient(table)
	if _, err := c.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","N":1}`), nil); err != nil {
		return err
	}
	_, err := c.GetEntity(ctx, "p", "r", nil)
	return err
}

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != status || re.ErrorCode != code {
		t.Fatalf("got %v; want %d %s", err, status, code)
	}
}

func TestNewServer(t *testing.T) {
	t.Parallel()
	srv := tablebridgetest.NewServer(t)
	if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
		t.Errorf("URL %q is not loopback HTTP", srv.URL)
	}
	if _, ok := srv.Store.(*memstore.Store); !ok {
		t.Errorf("default store is %T; want the in-memory store", srv.Store)
	}
	t.Run("Client", func(t *testing.T) {
		if err := roundTrip(t, srv.Client(), "ViaClient"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ConnectionString", func(t *testing.T) {
		svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := roundTrip(t, svc, "ViaConnectionString"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("Credential", func(t *testing.T) {
		c, err := aztables.NewClientWithSharedKey(srv.AccountURL(tablebridgetest.DevStoreAccountName)+"/ViaClient", srv.Credential(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetEntity(t.Context(), "p", "r", nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("WrongKeyRefused", func(t *testing.T) {
		cs := strings.Replace(srv.ConnectionString(), tablebridgetest.DevStoreAccountKey, "d3Jvbmc=", 1)
		svc, err := aztables.NewServiceClientFromConnectionString(cs, srv.ClientOptions())
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.CreateTable(t.Context(), "Refused", nil)
		wantCode(t, err, http.StatusForbidden, "AuthenticationFailed")
	})
}

// TestStoreLivesWithTheServer: each server has a store of its own, empty,
// and a closed server refuses connections.
func TestStoreLivesWithTheServer(t *testing.T) {
	t.Parallel()
	a, err := tablebridgetest.Start()
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, a.Client(), "Mine"); err != nil {
		t.Fatal(err)
	}
	b := tablebridgetest.NewServer(t)
	_, err = b.Client().NewClient("Mine").GetEntity(t.Context(), "p", "r", nil)
	wantCode(t, err, http.StatusNotFound, "TableNotFound")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := a.Client().CreateTable(t.Context(), "After", nil); err == nil {
		t.Fatal("a closed server answered")
	}
}

func TestWithAccount(t *testing.T) {
	t.Parallel()
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithAccount("other", "b3RoZXIta2V5"))
	cs, err := srv.AccountConnectionString("other", 0)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(cs, srv.ClientOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(t, svc, "Others"); err != nil {
		t.Fatal(err)
	}
	// Accounts are apart: devstoreaccount1 has no such table.
	_, err = srv.Client().NewClient("Others").GetEntity(t.Context(), "p", "r", nil)
	wantCode(t, err, http.StatusNotFound, "TableNotFound")
	if _, err := srv.AccountConnectionString("other", 1); err == nil {
		t.Error("a second key that was never given: no error")
	}
	if _, err := srv.AccountConnectionString("nosuch", 0); err == nil {
		t.Error("an unknown account: no error")
	}
}

func TestOptionsRefused(t *testing.T) {
	t.Parallel()
	for name, opt := range map[string]tablebridgetest.Option{
		"WithAccount(devstore)": tablebridgetest.WithAccount(tablebridgetest.DevStoreAccountName, "a2V5"),
		"WithAccount(bad key)":  tablebridgetest.WithAccount("other", "%%%"),
		"WithAccount(BadName)":  tablebridgetest.WithAccount("Bad_Name", "a2V5"),
		"WithStore(nil)":        tablebridgetest.WithStore(nil),
		"WithNow(nil)":          tablebridgetest.WithNow(nil),
		"WithBoltStore(\"\")":   tablebridgetest.WithBoltStore(""),
		"WithTokenVerifier":     tablebridgetest.WithTokenVerifier(nil),
		"WithBearerTokens(bad)": tablebridgetest.WithBearerTokens(&oauth.Config{Roles: []oauth.Assignment{{Claim: "oid", Value: "x", Role: "nosuch", Account: "*"}}}),
	} {
		t.Run(name, func(t *testing.T) {
			if srv, err := tablebridgetest.Start(opt); err == nil {
				srv.Close()
				t.Fatal("accepted")
			}
		})
	}
}

func TestWithBoltStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithBoltStore(dir))
	if err := roundTrip(t, srv.Client(), "OnDisk"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tablebridge.db")); err != nil {
		t.Fatal(err)
	}
}

func TestWithTLS(t *testing.T) {
	t.Parallel()
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithTLS())
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") || srv.Certificate() == nil {
		t.Fatalf("URL %q, certificate %v", srv.URL, srv.Certificate())
	}
	if !strings.HasPrefix(srv.ConnectionString(), "DefaultEndpointsProtocol=https;") {
		t.Errorf("connection string %q", srv.ConnectionString())
	}
	if err := roundTrip(t, srv.Client(), "Secure"); err != nil {
		t.Fatal(err)
	}
	// A client that does not trust the certificate fails the handshake
	// (at once: without retries, which would only fail the same way).
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(t.Context(), "Untrusted", nil); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted client: %v; want a certificate error", err)
	}
}

func TestWithBearerTokens(t *testing.T) {
	t.Parallel()
	const reader = "0b1c2d3e-0000-0000-0000-000000000002"
	roles := &oauth.Config{Roles: []oauth.Assignment{
		{Claim: "oid", Value: "0b1c2d3e-0000-0000-0000-000000000001", Role: "Storage Table Data Contributor", Account: "*"},
		{Claim: "oid", Value: reader, Role: "Storage Table Data Reader", Account: "*"},
	}}
	srv := tablebridgetest.NewServer(t, tablebridgetest.WithBearerTokens(roles))
	client := func(t *testing.T, principal string, claims map[string]any) *aztables.ServiceClient {
		t.Helper()
		c, err := srv.TokenClient(tablebridgetest.DevStoreAccountName, srv.TokenCredential(principal, claims))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	t.Run("Contributor", func(t *testing.T) {
		if err := roundTrip(t, client(t, "0b1c2d3e-0000-0000-0000-000000000001", nil), "ByToken"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ReaderMayRead", func(t *testing.T) {
		if _, err := client(t, reader, nil).NewClient("ByToken").GetEntity(t.Context(), "p", "r", nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ReaderMayNotWrite", func(t *testing.T) {
		_, err := client(t, reader, nil).CreateTable(t.Context(), "NotByReader", nil)
		wantCode(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	})
	t.Run("ExpiredTokenRefused", func(t *testing.T) {
		_, err := client(t, reader, map[string]any{"exp": time.Now().Add(-time.Hour).Unix()}).NewClient("ByToken").GetEntity(t.Context(), "p", "r", nil)
		wantCode(t, err, http.StatusUnauthorized, "InvalidAuthenticationInfo")
	})
	t.Run("SharedKeyStillWorks", func(t *testing.T) {
		if _, err := srv.Client().NewClient("ByToken").GetEntity(t.Context(), "p", "r", nil); err != nil {
			t.Fatal(err)
		}
	})
	// A request without credentials gets Azure's challenge, which clients
	// that discover their tenant sign in from (the Java SDK's recording
	// TableAsyncClientTest.createTableWithMultipleTenants,
	// Azure/azure-sdk-for-java sdk/tables/azure-data-tables/src/test/resources/session-records);
	// basic mode takes every tenant, so it names the multi-tenant one.
	t.Run("AnonymousGetsTheChallenge", func(t *testing.T) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.AccountURL(tablebridgetest.DevStoreAccountName)+"/Tables", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-version", "2020-12-06")
		resp, err := srv.HTTPClient().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		const challenge = "Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com"
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("x-ms-error-code") != "NoAuthenticationInformation" ||
			resp.Header.Get("WWW-Authenticate") != challenge {
			t.Errorf("got %d %s %q, want 401 NoAuthenticationInformation %q",
				resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("WWW-Authenticate"), challenge)
		}
	})
	t.Run("NoTokensWithoutTheOption", func(t *testing.T) {
		plain := tablebridgetest.NewServer(t, tablebridgetest.WithTLS())
		_, err := plain.TokenCredential("x", nil).GetToken(context.Background(), policyOptions)
		if !errors.Is(err, tablebridgetest.ErrNoBearerTokens) {
			t.Fatalf("GetToken: %v; want ErrNoBearerTokens", err)
		}
	})
}

var policyOptions = policy.TokenRequestOptions{Scopes: []string{"https://storage.azure.com/.default"}}
