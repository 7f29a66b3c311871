package oauth_test

import (
	"log/slog"
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

// TestBasicMode drives the official Go SDK with a TokenCredential over
// HTTPS against the real handler in basic mode, on both stores: every
// accepted audience, issuer and lifetime form, and every refusal with
// Azure's status, code, reason and challenge, leaving the data untouched.
func TestBasicMode(t *testing.T) {
	t.Parallel()
	forEachStore(t, testBasicMode)
}

func testBasicMode(t *testing.T, storeOpts []tablebridgetest.Option) {
	logs := &logBuffer{}
	srv := protocoltest.New(t, append(storeOpts, tablebridgetest.WithTLS(), tablebridgetest.WithTokenVerifier(basic(t, nil)),
		tablebridgetest.WithLogRequests(), tablebridgetest.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))...)
	// Basic mode checks no signature: any key makes an acceptable token.
	key := testissuer.NewKey(t, jose.RS256)
	v1 := "https://sts.windows.net/" + tenant + "/"
	challenge := "Bearer authorization_uri=https://login.microsoftonline.com/" + tenant + "/oauth2/authorize resource_id=https://storage.azure.com"
	now := time.Now()

	accepted := []struct {
		name   string
		claims testissuer.Claims
	}{
		{"AudienceStorage", testissuer.Claims{"aud": "https://storage.azure.com"}},
		{"AudienceStorageSlash", testissuer.Claims{"aud": "https://storage.azure.com/"}},
		{"AudienceResourceID", testissuer.Claims{"aud": oauth.StorageResourceID}},
		{"AudienceAccountEndpoint", testissuer.Claims{"aud": "https://devstoreaccount1.table.core.windows.net"}},
		{"AudienceThisEndpoint", testissuer.Claims{"aud": srv.AccountURL(devAccount)}},
		{"AudienceList", testissuer.Claims{"aud": []string{"api://other", "https://storage.azure.com"}}},
		{"IssuerV2", testissuer.Claims{"iss": "https://login.microsoftonline.com/" + tenant + "/v2.0"}},
		{"IssuerChinaV1", testissuer.Claims{"iss": "https://sts.chinacloudapi.cn/" + tenant + "/"}},
		{"IssuerChinaV2", testissuer.Claims{"iss": "https://login.chinacloudapi.cn/" + tenant + "/v2.0"}},
		{"IssuerUSGovV2", testissuer.Claims{"iss": "https://login.microsoftonline.us/" + tenant + "/v2.0"}},
		// Azure Germany, as Azurite's OAuth tests send it (Azure/Azurite
		// tests/table/auth/oauth.test.ts, "Should work with valid
		// audiences" and "... issuers"): the account's endpoint in that
		// cloud as the audience, with or without a slash, and its v1
		// issuer.
		{"AudienceGermanyEndpoint", testissuer.Claims{"aud": "https://devstoreaccount1.table.core.cloudapi.de"}},
		{"AudienceGermanyEndpointSlash", testissuer.Claims{"aud": "https://devstoreaccount1.table.core.cloudapi.de/"}},
		{"IssuerGermanyV1", testissuer.Claims{"iss": "https://sts.microsoftonline.de/" + tenant + "/"}},
		{"NotBeforeWithinSkew", testissuer.Claims{"nbf": now.Add(10 * time.Minute).Unix()}},
		{"ExpiredWithinSkew", testissuer.Claims{"exp": now.Add(-10 * time.Minute).Unix()}},
		{"NoNotBefore", testissuer.Claims{"nbf": nil}},
	}
	for _, tc := range accepted {
		t.Run("Accepts"+tc.name, func(t *testing.T) {
			c := testissuer.Claims{"iss": v1, "oid": "0b1c2d3e-0000-0000-0000-" + "000000000001"}
			for k, v := range tc.claims {
				c[k] = v
			}
			cred := credential(testissuer.Token(t, key, c["iss"].(string), c))
			sc := srv.TokenServiceClient(t, devAccount, cred)
			name := protocoltest.TableName(t, "")
			if _, err := sc.CreateTable(t.Context(), name, nil); err != nil {
				t.Fatal(err)
			}
			tc := sc.NewClient(name)
			if _, err := tc.AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"r","V":1}`), nil); err != nil {
				t.Fatal(err)
			}
			if _, err := tc.GetEntity(t.Context(), "p", "r", nil); err != nil {
				t.Fatal(err)
			}
			if got := cred.Scopes(); len(got) == 0 || got[0] != "https://storage.azure.com/.default" {
				t.Errorf("the SDK asked for scopes %q", got)
			}
		})
	}

	// The refusals leave no trace: the table they try to create is absent.
	refused := []struct {
		name      string
		iss       string
		claims    testissuer.Claims
		reason    string
		challenge string
	}{
		{"WrongAudience", v1, testissuer.Claims{"aud": "https://management.azure.com/"}, "Audience validation failed. Audience did not match.", challenge},
		{"OtherAccountEndpoint", v1, testissuer.Claims{"aud": "https://otheraccount.table.core.windows.net"}, "Audience validation failed.", challenge},
		{"NoAudience", v1, testissuer.Claims{"aud": nil}, "Audience validation failed.", challenge},
		{"NotEntraIssuer", "https://issuer.example.com/" + tenant + "/", nil, "Issuer validation failed. Issuer did not match.",
			"Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com"},
		{"IssuerTenantNotGUID", "https://sts.windows.net/contoso.com/", nil, "Issuer validation failed.",
			"Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com"},
		{"IssuerOverHTTP", "http://sts.windows.net/" + tenant + "/", nil, "Issuer validation failed.",
			"Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com"},
		{"IssuerV3Path", "https://login.microsoftonline.com/" + tenant + "/v3.0", nil, "Issuer validation failed.",
			"Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com"},
		{"NotYetValid", v1, testissuer.Claims{"nbf": now.Add(20 * time.Minute).Unix()}, "Lifetime validation failed. The token is not yet valid.", challenge},
		{"Expired", v1, testissuer.Claims{"exp": now.Add(-20 * time.Minute).Unix()}, "Lifetime validation failed. The token is expired.", challenge},
		{"NoExpiry", v1, testissuer.Claims{"exp": nil}, "Lifetime validation failed. The token is missing an Expiration Time.", challenge},
		{"ChinaChallenge", "https://sts.chinacloudapi.cn/" + tenant + "/", testissuer.Claims{"aud": "api://x"}, "Audience validation failed.",
			"Bearer authorization_uri=https://login.chinacloudapi.cn/" + tenant + "/oauth2/authorize resource_id=https://storage.azure.com"},
	}
	for _, tc := range refused {
		t.Run("Refuses"+tc.name, func(t *testing.T) {
			sc := srv.TokenServiceClient(t, devAccount, credential(testissuer.Token(t, key, tc.iss, tc.claims)))
			name := protocoltest.TableName(t, "")
			_, err := sc.CreateTable(t.Context(), name, nil)
			wantRefusal(t, err, http.StatusUnauthorized, "InvalidAuthenticationInfo", tc.reason, tc.challenge)
			if _, err := srv.Client().NewClient(name).GetAccessPolicy(t.Context(), nil); err == nil {
				t.Error("the refused request created the table")
			}
		})
	}

	t.Run("RefusesMalformed", func(t *testing.T) {
		for _, token := range []string{"abc", "a.b.c", "eyJhbGciOiJub25lIn0.eyJhdWQiOiJ4In0."} {
			resp := rawBearer(t, srv, http.MethodGet, "/Tables", token)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("x-ms-error-code") != "InvalidAuthenticationInfo" ||
				!strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer authorization_uri=") {
				t.Errorf("%q: %d %s %q", token, resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("WWW-Authenticate"))
			}
		}
	})

	t.Run("RefusesOldVersion", func(t *testing.T) {
		token := testissuer.Token(t, key, v1, nil)
		resp := srv.Do(t, protocoltest.Request{Method: http.MethodGet, Path: "/Tables", Signing: protocoltest.Unsigned,
			Header: http.Header{"Authorization": {"Bearer " + token}, "x-ms-version": {"2017-07-29"}}})
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
			t.Errorf("got %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	})

	// Owner-only operations: a token is refused whatever its role, and
	// Shared Key and SAS keep working beside tokens.
	t.Run("OwnerOnlyOperationsAndSharedKeyBeside", func(t *testing.T) {
		keyClient := srv.Client()
		name := protocoltest.TableName(t, "")
		if _, err := keyClient.CreateTable(t.Context(), name, nil); err != nil {
			t.Fatal(err)
		}
		sc := srv.TokenServiceClient(t, devAccount, credential(testissuer.Token(t, key, v1, nil)))
		_, err := sc.NewClient(name).GetAccessPolicy(t.Context(), nil)
		wantRefusal(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch", "", "")
		_, err = sc.NewClient(name).SetAccessPolicy(t.Context(), &aztables.SetAccessPolicyOptions{})
		wantRefusal(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch", "", "")
		_, err = sc.GetProperties(t.Context(), nil)
		wantRefusal(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch", "", "")
		_, err = sc.SetProperties(t.Context(), aztables.ServiceProperties{}, nil)
		wantRefusal(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch", "", "")

		if _, err := keyClient.NewClient(name).GetAccessPolicy(t.Context(), nil); err != nil {
			t.Errorf("Shared Key beside tokens: %v", err)
		}
		sasURL, err := keyClient.GetAccountSASURL(aztables.AccountSASResourceTypes{Object: true},
			aztables.AccountSASPermissions{Read: true, Add: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		resp := srv.Do(t, protocoltest.Request{Method: http.MethodGet, Path: "/" + name + "()", Signing: protocoltest.Unsigned,
			RawQuery: sasURL[strings.Index(sasURL, "?")+1:]})
		if resp.StatusCode != http.StatusOK {
			t.Errorf("SAS beside tokens: %d %s", resp.StatusCode, resp.Body)
		}
	})

	t.Run("RoleLimits", func(t *testing.T) {
		// With role assignments, basic mode grants what they say.
		cfg, err := oauth.ParseConfig([]byte(`{"roles":[{"claim":"oid","value":"reader-oid","role":"reader","account":"*"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		rsrv := protocoltest.New(t, append(storeOpts, tablebridgetest.WithTLS(), tablebridgetest.WithTokenVerifier(basic(t, cfg)))...)
		name := protocoltest.TableName(t, "")
		if _, err := rsrv.Client().CreateTable(t.Context(), name, nil); err != nil {
			t.Fatal(err)
		}
		reader := rsrv.TokenServiceClient(t, devAccount, credential(testissuer.Token(t, key, v1, testissuer.Claims{"oid": "reader-oid"})))
		if _, err := reader.NewClient(name).GetEntity(t.Context(), "p", "r", nil); err == nil || !strings.Contains(err.Error(), "ResourceNotFound") {
			t.Errorf("reader read: %v, want 404 ResourceNotFound", err)
		}
		_, err = reader.NewClient(name).AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil)
		wantRefusal(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch", "", "")
		stranger := rsrv.TokenServiceClient(t, devAccount, credential(testissuer.Token(t, key, v1, testissuer.Claims{"oid": "someone-else"})))
		_, err = stranger.NewClient(name).GetEntity(t.Context(), "p", "r", nil)
		wantRefusal(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch", "", "")
	})

	t.Run("OverHTTPIsRefused", func(t *testing.T) {
		plain := protocoltest.New(t, append(storeOpts, tablebridgetest.WithTokenVerifier(basic(t, nil)))...)
		resp := rawBearer(t, plain, http.MethodGet, "/Tables", testissuer.Token(t, key, v1, nil))
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" ||
			!strings.Contains(string(resp.Body), "Authentication scheme Bearer is not allowed with HTTP.") {
			t.Errorf("got %d %s %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Body)
		}
	})

	t.Run("LogNamesPrincipalNotToken", func(t *testing.T) {
		token := testissuer.Token(t, key, v1, testissuer.Claims{"oid": "log-oid"})
		sc := srv.TokenServiceClient(t, devAccount, credential(token))
		if _, err := sc.CreateTable(t.Context(), protocoltest.TableName(t, ""), nil); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(logs.String(), token) || strings.Contains(logs.String(), strings.Split(token, ".")[1]) {
			t.Fatal("the log holds the token")
		}
		found := false
		for _, l := range logs.requestLines(t) {
			if l["principal"] == "oid:log-oid" && l["auth"] == "Bearer" && l["operation"] == "CreateTable" {
				found = true
			}
		}
		if !found {
			t.Errorf("no request line names the principal:\n%s", logs.String())
		}
	})
}
