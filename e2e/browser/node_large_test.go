package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/serveproc"
)

// TestNodeSDKBodyPastTheLimit drives @azure/data-tables from Node.js with
// a 4.5 MB entity and a transaction past 4 MiB, three times each, against a
// real `tablebridge serve` on bolt over HTTP and over HTTPS, as Azurite's
// table suite does (tests/table/apis/table.entity.azure.data-tables.test.ts,
// "Should not insert entities with request body greater than 4 MB"): every one gets 413
// RequestBodyTooLarge. The answer comes while Node is still writing the
// body; the server reads the rest of it (shared/httpapi drain.go) rather
// than closing the connection, which failed Node's write with EPIPE and,
// when that error won the race with the answer, the request with it.
func TestNodeSDKBodyPastTheLimit(t *testing.T) {
	t.Parallel()
	tl := findTools(t)
	for _, tc := range []struct {
		name string
		opts []serveproc.Option
	}{
		{"HTTP", nil},
		{"HTTPS", []serveproc.Option{serveproc.SelfSignedTLS()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := serveproc.Start(t, "bolt", tc.opts...)
			ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, tl.node, "node-large.mjs", srv.ConnectionString, "nodelarge", "3")
			cmd.Dir = tl.pageDir
			cmd.Env = os.Environ()
			if srv.CertFile != "" {
				cmd.Env = append(cmd.Env, "NODE_EXTRA_CA_CERTS="+srv.CertFile)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("node-large.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), tail(stderr.String(), 2000))
			}
			var got struct {
				Entity []string `json:"entity"`
				Batch  []string `json:"batch"`
			}
			if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &got); err != nil {
				t.Fatalf("node-large.mjs printed %q: %v", stdout.String(), err)
			}
			t.Logf("node: %s", bytes.TrimSpace(stdout.Bytes()))
			for _, answers := range [][]string{got.Entity, got.Batch} {
				if len(answers) != 3 {
					t.Fatalf("answers %v, want 3", answers)
				}
				for _, a := range answers {
					if a != "413 RequestBodyTooLarge" {
						t.Errorf("answers %v, want 413 RequestBodyTooLarge each time", answers)
						break
					}
				}
			}
		})
	}
}
