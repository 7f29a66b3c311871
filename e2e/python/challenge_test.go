package python_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/internal/testissuer"
)

// TestPythonSDKChallenge: azure-data-tables signs in from the service's
// bearer challenge with its own BearerTokenChallengePolicy, against a real
// `tablebridge serve -tls-self-signed -oauth verified` whose one issuer,
// on loopback, is laid out as a Microsoft Entra tenant. The application's
// credential first gives a token of its home tenant, which the service
// refuses with 401 InvalidAuthenticationInfo and the challenge; the SDK
// takes the tenant and resource from it, gets a token for them and
// succeeds. The test log shows the requests.
func TestPythonSDKChallenge(t *testing.T) {
	t.Parallel()
	python := serveproc.Require(t, "the Python SDK (azure-data-tables)", installHint, importsSDK,
		os.Getenv("TABLEBRIDGE_PYTHON"), "/usr/bin/python3")
	const tenant, home = "72f988bf-86f1-41af-91ab-2d7cd011db47", "0e2bd6cb-4a43-4f1c-9f17-6a3f1d1e5d01"
	key := testissuer.NewKey(t, jose.ES256)
	iss, homeIss := testissuer.NewTenant(t, tenant, key), testissuer.NewTenant(t, home, key)
	config := filepath.Join(t.TempDir(), "oauth.json")
	if err := os.WriteFile(config, []byte(fmt.Sprintf(`{"issuers": [%q], "roles": [
		{"claim": "oid", "value": "python-app", "role": "contributor", "account": "devstoreaccount1"}]}`, iss.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := serveproc.Start(t, "pebble", serveproc.SelfSignedTLS(), serveproc.Flags("-oauth", "verified", "-oauth-config", config))
	claims := testissuer.Claims{"oid": "python-app"}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "challenge.py", srv.AccountURL, "pychallenge",
		homeIss.Token(t, key, claims), tenant, iss.Token(t, key, claims))
	// requests trusts serve's certificate through REQUESTS_CA_BUNDLE; no
	// proxy between the SDK and the loopback server, and no bytecode cache
	// in the source tree.
	cmd.Env = append(os.Environ(), "REQUESTS_CA_BUNDLE="+srv.CertFile, "PYTHONDONTWRITEBYTECODE=1",
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("challenge.py: %v\nstdout: %s\nstderr: %s", err, stdout.String(), tail(stderr.String(), 2000))
	}
	testissuer.CheckScriptedSignIn(t, "python", stdout.Bytes(), iss.URL, tenant)
}
