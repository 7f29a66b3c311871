package python_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/serveproc"
)

func TestMain(m *testing.M) { os.Exit(serveproc.Main(m)) }

const installHint = "run infra/python/install.sh (make tools; as root it installs Debian's python3-azure) or set TABLEBRIDGE_PYTHON"

// importsSDK checks that python can import azure.data.tables.
func importsSDK(python string) error {
	out, err := exec.Command(python, "-c", "import azure.data.tables").CombinedOutput()
	if err != nil {
		return fmt.Errorf("import azure.data.tables: %v: %s", err, tail(strings.TrimSpace(string(out)), 300))
	}
	return nil
}

// TestPythonSDK runs scenario.py with azure-data-tables against
// `tablebridge serve` on each store.
func TestPythonSDK(t *testing.T) {
	t.Parallel()
	python := serveproc.Require(t, "the Python SDK (azure-data-tables)", installHint, importsSDK,
		os.Getenv("TABLEBRIDGE_PYTHON"), "/usr/bin/python3")
	for _, store := range serveproc.Stores {
		t.Run(store, func(t *testing.T) {
			srv := serveproc.Start(t, store)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, python, "scenario.py", srv.ConnectionString, "py"+store)
			// No bytecode cache in the source tree, and no proxy between the
			// SDK and the loopback server.
			cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err := cmd.Run()
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("scenario.py on %s: %v\nstdout: %s\nstderr: %s", store, err, stdout.String(), tail(stderr.String(), 4000))
			}
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			var summary struct {
				SDK    string   `json:"azure-data-tables"`
				Core   string   `json:"azure-core"`
				Python string   `json:"python"`
				Steps  []string `json:"steps"`
			}
			if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil || len(summary.Steps) < 10 {
				t.Fatalf("scenario.py printed %q (%v), want its JSON summary of every step", stdout.String(), err)
			}
			t.Logf("azure-data-tables %s (azure-core %s, Python %s) on %s: %d steps in %v",
				summary.SDK, summary.Core, summary.Python, store, len(summary.Steps), elapsed.Round(time.Millisecond))
		})
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
