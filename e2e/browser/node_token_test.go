package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/internal/testissuer"
)

// TestNodeSDKToken drives @azure/data-tables from Node.js with a
// TokenCredential over HTTPS against a real `tablebridge serve
// -tls-self-signed -oauth basic`, trusting the printed certificate through
// NODE_EXTRA_CA_CERTS as docs/serve.md says: the SDK asks for the storage
// scope, the token creates a table and an entity and reads it back, and the
// owner-only Get Table ACL is refused.
func TestNodeSDKToken(t *testing.T) {
	t.Parallel()
	tl := findTools(t)
	srv := serveproc.Start(t, "pebble", serveproc.SelfSignedTLS(), serveproc.Flags("-oauth", "basic"))
	token := testissuer.Token(t, testissuer.NewKey(t, jose.ES256), "https://sts.windows.net/72f988bf-86f1-41af-91ab-2d7cd011db47/",
		testissuer.Claims{"oid": "node-app"})

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tl.node, "node-token.mjs", srv.AccountURL, token, "nodetoken")
	cmd.Dir = tl.pageDir
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+srv.CertFile, "NO_PROXY=127.0.0.1,localhost")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node-token.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), tail(stderr.String(), 2000))
	}
	var got struct {
		N      int      `json:"n"`
		ACL    string   `json:"acl"`
		Scopes []string `json:"scopes"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
		t.Fatalf("node-token.mjs printed %q: %v", stdout.String(), err)
	}
	if got.N != 42 || got.ACL != "403 AuthorizationPermissionMismatch" || len(got.Scopes) == 0 || got.Scopes[0] != "https://storage.azure.com/.default" {
		t.Errorf("observed %+v", got)
	}
}
