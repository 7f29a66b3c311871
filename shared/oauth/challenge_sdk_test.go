package oauth_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/internal/testissuer"
	"github.com/tablebridge/tablebridge/shared/oauth"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// TestChallengeSignIn drives the Go SDK (aztables over azcore's
// BearerTokenPolicy) as a client that discovers its tenant from the
// service, the way the Java SDK does in its recording
// TableAsyncClientTest.createTableWithMultipleTenants (Azure/azure-sdk-for-java
// sdk/tables/azure-data-tables/src/test/resources/session-records): it
// knows no tenant, sends Create Table without credentials, reads the 401
// NoAuthenticationInformation challenge, gets a token for the tenant and
// resource the challenge names, sends the request again signed, and
// succeeds. The server is in verified mode with one issuer, on loopback,
// laid out as an Entra tenant; the token is refused for any other tenant,
// so the client signs in only through the challenge. The test log shows
// the three requests.
func TestChallengeSignIn(t *testing.T) {
	t.Parallel()
	const otherTenant = "0e2bd6cb-4a43-4f1c-9f17-6a3f1d1e5d01"
	key := testissuer.NewKey(t, jose.RS256)
	iss := testissuer.NewTenant(t, tenant, key)
	other := testissuer.NewTenant(t, otherTenant, key)
	cfg, err := oauth.ParseConfig([]byte(fmt.Sprintf(`{"issuers": [%q], "roles": [
		{"claim": "oid", "value": "discovering-app", "role": "contributor", "account": "devstoreaccount1"}]}`, iss.URL)))
	if err != nil {
		t.Fatal(err)
	}
	v, err := oauth.NewVerified(cfg, oauth.VerifiedOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Discover(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv := protocoltest.New(t, tablebridgetest.WithTLS(), tablebridgetest.WithTokenVerifier(v))
	challenge := "Bearer authorization_uri=" + iss.URL + " resource_id=https://storage.azure.com"

	// The credential can sign in to both tenants; the service names the one
	// it takes.
	cred := &testissuer.TenantCredential{Issuers: []*testissuer.Issuer{other, iss}, Key: key, Claims: testissuer.Claims{"oid": "discovering-app"}}
	log := &testissuer.RequestLog{Logf: t.Logf}
	discovery := &testissuer.TenantDiscovery{}
	opts := srv.ClientOptions()
	opts.Retry = policy.RetryOptions{MaxRetries: -1}
	opts.PerRetryPolicies = append(opts.PerRetryPolicies,
		runtime.NewBearerTokenPolicy(cred, []string{oauth.StorageAudience + "/.default"}, &policy.BearerTokenOptions{AuthorizationHandler: discovery.Handler()}),
		log)
	client, err := aztables.NewServiceClientWithNoCredential(srv.AccountURL(devAccount), opts)
	if err != nil {
		t.Fatal(err)
	}

	table := protocoltest.TableName(t, "")
	if _, err := client.CreateTable(t.Context(), table, nil); err != nil {
		t.Fatalf("Create Table through the challenge: %v", err)
	}
	got := log.Exchanges()
	want := []testissuer.Exchange{
		{Method: http.MethodPost, Path: "/" + devAccount + "/Tables", Status: http.StatusUnauthorized, ErrorCode: "NoAuthenticationInformation", Challenge: challenge},
		{Method: http.MethodPost, Path: "/" + devAccount + "/Tables", Authorization: "Bearer", Status: http.StatusCreated},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("requests:\n%v\nwant:\n%v", got, want)
	}
	wantAsked := []testissuer.TokenRequest{{Tenant: tenant, Scopes: []string{"https://storage.azure.com/.default"}}}
	if asked := cred.Asked(); len(asked) != 1 || asked[0].Tenant != wantAsked[0].Tenant || !slices.Equal(asked[0].Scopes, wantAsked[0].Scopes) {
		t.Errorf("the credential was asked %+v, want %+v", asked, wantAsked)
	}

	// Once the tenant is known, requests go signed at once.
	if _, err := client.NewClient(table).AddEntity(t.Context(), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	if got := log.Exchanges()[2:]; len(got) != 1 || got[0].Authorization != "Bearer" || got[0].Status != http.StatusCreated {
		t.Errorf("after sign-in: %v, want one signed insert", got)
	}
	// The table is there for the account's key holder too.
	if _, err := srv.Client().NewClient(table).GetEntity(t.Context(), "p", "r", nil); err != nil {
		t.Error(err)
	}
}

// TestChallengeNames: what the challenge names. For a Microsoft Entra
// issuer, Azure's form: the tenant's authorize endpoint and the resource
// tokens must be for, the first configured audience or
// https://storage.azure.com. For another OIDC issuer, its identifier,
// discovered or not, so that every front door gives the same answer from
// a cold start on. Basic mode takes every Entra tenant, so it names the
// multi-tenant authority, "common".
func TestChallengeNames(t *testing.T) {
	t.Parallel()
	iss := testissuer.New(t, testissuer.NewKey(t, jose.ES256))
	verified := func(t *testing.T, config string) *oauth.Verified {
		t.Helper()
		cfg, err := oauth.ParseConfig([]byte(config))
		if err != nil {
			t.Fatal(err)
		}
		v, err := oauth.NewVerified(cfg, oauth.VerifiedOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	roles := `"roles": [{"claim": "oid", "value": "x", "role": "reader", "account": "*"}]`
	entra := "https://sts.windows.net/" + tenant + "/"
	for _, tc := range []struct {
		name, config, want string
		discover           bool
	}{
		{"Entra issuer", fmt.Sprintf(`{"issuers": [%q], %s}`, entra, roles),
			"Bearer authorization_uri=https://login.microsoftonline.com/" + tenant + "/oauth2/authorize resource_id=https://storage.azure.com", false},
		{"Entra v2.0 issuer of US Government, configured audience", fmt.Sprintf(`{"issuers": [%q], "audiences": ["api://tablebridge", "https://storage.azure.com"], %s}`,
			"https://login.microsoftonline.us/"+tenant+"/v2.0", roles),
			"Bearer authorization_uri=https://login.microsoftonline.us/" + tenant + "/oauth2/authorize resource_id=api://tablebridge", false},
		{"the first issuer's", fmt.Sprintf(`{"issuers": [%q, %q], %s}`, entra, iss.URL, roles),
			"Bearer authorization_uri=https://login.microsoftonline.com/" + tenant + "/oauth2/authorize resource_id=https://storage.azure.com", false},
		{"OIDC issuer", fmt.Sprintf(`{"issuers": [%q], %s}`, iss.URL, roles),
			"Bearer authorization_uri=" + iss.URL + " resource_id=https://storage.azure.com", false},
		{"OIDC issuer, discovered, configured audience", fmt.Sprintf(`{"issuers": [%q], "audiences": ["api://tablebridge"], %s}`, iss.URL, roles),
			"Bearer authorization_uri=" + iss.URL + " resource_id=api://tablebridge", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := verified(t, tc.config)
			if tc.discover {
				if err := v.Discover(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			if got := v.Challenge(); got != tc.want {
				t.Errorf("challenge %q, want %q", got, tc.want)
			}
		})
	}
	if got, want := basic(t, nil).Challenge(), "Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com"; got != want {
		t.Errorf("basic mode: %q, want %q", got, want)
	}
}
