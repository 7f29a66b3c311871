package python_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

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
	sc := testissuer.NewSignInScenario(t, "python-app")
	srv := serveproc.Start(t, "pebble", serveproc.SelfSignedTLS(), serveproc.Flags("-oauth", "verified", "-oauth-config", sc.Config))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "challenge.py", srv.AccountURL, "pychallenge",
		sc.HomeToken, sc.Tenant, sc.TenantToken)
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
	sc.Check(t, "python", stdout.Bytes())
}
