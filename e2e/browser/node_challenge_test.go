package browser_test

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

// TestNodeSDKChallenge: @azure/data-tables signs in from the service's
// bearer challenge with its own challenge handling, against a real
// `tablebridge serve -tls-self-signed -oauth verified` whose one issuer, on
// loopback, is laid out as a Microsoft Entra tenant. The application's
// credential first gives a token of its home tenant, which the service
// refuses with 401 InvalidAuthenticationInfo and the challenge; the SDK
// takes the tenant and resource from it, gets a token for them and
// succeeds. The test log shows the requests.
func TestNodeSDKChallenge(t *testing.T) {
	t.Parallel()
	tl := findTools(t)
	sc := testissuer.NewSignInScenario(t, "node-app")
	srv := serveproc.Start(t, "bolt", serveproc.SelfSignedTLS(), serveproc.Flags("-oauth", "verified", "-oauth-config", sc.Config))
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tl.node, "node-challenge.mjs", srv.AccountURL, "nodechallenge",
		sc.HomeToken, sc.Tenant, sc.TenantToken)
	cmd.Dir = tl.pageDir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+srv.CertFile, "NO_PROXY=127.0.0.1,localhost")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node-challenge.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), tail(stderr.String(), 2000))
	}
	sc.Check(t, "node", stdout.Bytes())
}
