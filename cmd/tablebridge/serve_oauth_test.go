package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/testissuer"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// TestServeOAuthVerified runs the real tablebridge serve with -tls-cert,
// -tls-key, -oauth verified and -oauth-config against an issuer on
// loopback, and drives it with the Go SDK and a TokenCredential: the
// configured contributor writes, a reader is refused a write, and a token
// of another key is refused.
func TestServeOAuthVerified(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key, err := ensureSelfSigned(filepath.Join(dir, "tls"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	signing := testissuer.NewKey(t, jose.ES256)
	iss := testissuer.New(t, signing)
	configPath := filepath.Join(dir, "oauth.json")
	config := fmt.Sprintf(`{"issuers": [%q], "roles": [
		{"claim": "oid", "value": "app-writer", "role": "contributor", "account": "devstoreaccount1"},
		{"claim": "oid", "value": "app-reader", "role": "reader", "account": "devstoreaccount1"}]}`, iss.URL)
	if err := os.WriteFile(configPath, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	connStr, done := startServeConfig(t, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: dir, storeKind: "bolt",
		accounts: auth.AccountList{auth.DevStoreAccount()},
		tls:      tlsFlags{cert: cert, key: key},
		oauth:    oauthFlags{mode: "verified", configPath: configPath}})
	endpoint := connStr[strings.Index(connStr, "TableEndpoint=")+len("TableEndpoint=") : len(connStr)-1]
	if !strings.HasPrefix(endpoint, "https://") {
		t.Fatalf("endpoint %q", endpoint)
	}
	client := func(oid string, k *testissuer.Key) *aztables.ServiceClient {
		token := iss.Token(t, k, testissuer.Claims{"oid": oid})
		sc, err := aztables.NewServiceClient(endpoint, &testissuer.Credential{Token: func() string { return token }},
			&aztables.ClientOptions{ClientOptions: policy.ClientOptions{Transport: trustingClient(t, cert), Retry: policy.RetryOptions{MaxRetries: -1}}})
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	writer := client("app-writer", signing)
	if _, err := writer.CreateTable(ctx, "tokens", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := writer.NewClient("tokens").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatal(err)
	}
	reader := client("app-reader", signing)
	if _, err := reader.NewClient("tokens").GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatal(err)
	}
	_, err = reader.NewClient("tokens").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"x"}`), nil)
	wantCode(t, err, 403, "AuthorizationPermissionMismatch")
	_, err = client("app-writer", testissuer.NewKey(t, jose.ES256)).NewClient("tokens").AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"y"}`), nil)
	wantCode(t, err, 401, "InvalidAuthenticationInfo")

	// A request without credentials gets the challenge that names the
	// issuer's authorization endpoint, found by discovery at start (the
	// Java SDK's recording TableAsyncClientTest.createTableWithMultipleTenants,
	// Azure/azure-sdk-for-java sdk/tables/azure-data-tables/src/test/resources/session-records).
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint+"/Tables", strings.NewReader(`{"TableName":"anonymous"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-ms-version", "2020-12-06")
	resp, err := trustingClient(t, cert).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "Bearer authorization_uri=" + iss.URL + " resource_id=https://storage.azure.com"; resp.StatusCode != 401 ||
		resp.Header.Get("x-ms-error-code") != "NoAuthenticationInformation" || resp.Header.Get("WWW-Authenticate") != want {
		t.Errorf("anonymous Create Table: %d %s %q, want 401 NoAuthenticationInformation %q",
			resp.StatusCode, resp.Header.Get("x-ms-error-code"), resp.Header.Get("WWW-Authenticate"), want)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

func wantCode(t *testing.T, err error, status int, code string) {
	t.Helper()
	re, ok := err.(*azcore.ResponseError)
	if !ok || re.StatusCode != status || re.ErrorCode != code {
		t.Errorf("got %v, want %d %s", err, status, code)
	}
}

func TestServeOAuthRejectsBadFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	_ = os.WriteFile(bad, []byte(`{"roles": [{"claim": "oid", "value": "x", "role": "owner", "account": "a"}]}`), 0o600)
	noRoles := filepath.Join(dir, "noroles.json")
	_ = os.WriteFile(noRoles, []byte(`{"issuers": ["https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0"]}`), 0o600)
	for _, args := range [][]string{
		{"-oauth", "nosuch"},
		{"-oauth-config", noRoles},
		{"-oauth", "verified"},
		{"-oauth", "verified", "-oauth-config", noRoles},
		{"-oauth", "basic", "-oauth-config", bad},
		{"-oauth", "basic", "-oauth-config", filepath.Join(dir, "missing.json")},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if err := runServe(append([]string{"-listen", "127.0.0.1:0", "-data", t.TempDir()}, args...)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

// TestServeOAuthBasic runs the real serve with -tls-self-signed and -oauth
// basic: it warns at start that signatures are not checked, and accepts a
// token signed by any key whose claims are Entra's.
func TestServeOAuthBasic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, serveConfig{listen: "127.0.0.1:0", dataDir: dir, storeKind: "bolt",
			accounts: auth.AccountList{auth.DevStoreAccount()}, tls: tlsFlags{selfSigned: true},
			oauth: oauthFlags{mode: "basic"}}, pw)
		pw.CloseWithError(errors.New("serve returned"))
		done <- err
	}()
	var printed strings.Builder
	endpoint := ""
	sc := bufio.NewScanner(pr)
	for endpoint == "" && sc.Scan() {
		printed.WriteString(sc.Text() + "\n")
		if _, after, ok := strings.Cut(sc.Text(), "TableEndpoint="); ok {
			endpoint = strings.TrimSuffix(after, ";")
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if !strings.Contains(printed.String(), "WARNING: -oauth basic accepts bearer tokens WITHOUT checking their signature") {
		t.Errorf("serve did not warn:\n%s", printed.String())
	}
	token := testissuer.Token(t, testissuer.NewKey(t, jose.RS256), "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
		testissuer.Claims{"oid": "local-dev"})
	sc2, err := aztables.NewServiceClient(endpoint, &testissuer.Credential{Token: func() string { return token }},
		&aztables.ClientOptions{ClientOptions: policy.ClientOptions{Transport: trustingClient(t, filepath.Join(dir, "tls", "cert.pem")),
			Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc2.CreateTable(ctx, "basicmode", nil); err != nil {
		t.Fatal(err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
