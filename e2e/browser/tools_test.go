package browser_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tablebridge/tablebridge/internal/serveproc"
)

func TestMain(m *testing.M) { os.Exit(serveproc.Main(m)) }

// installHint names the script that installs what the test needs.
const installHint = "run infra/browser/install.sh (installs chromium when root, then npm ci in e2e/browser)"

// tools are the programs and files the browser test needs.
type tools struct {
	chromium string
	node     string
	pageDir  string
}

// findTools locates everything or stops the test as serveproc.Require
// does: skipped loudly on a developer machine, failed when CI is set.
func findTools(t *testing.T) tools {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tl := tools{pageDir: wd}
	chromiums := []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}
	if env := os.Getenv("TABLEBRIDGE_CHROMIUM"); env != "" {
		chromiums = []string{env}
	}
	tl.chromium = serveproc.Require(t, "chromium", installHint, nil, chromiums...)
	tl.node = serveproc.Require(t, "node with e2e/browser/node_modules", installHint, func(string) error {
		for _, dep := range []string{"@azure/data-tables", "esbuild"} {
			if _, err := os.Stat(filepath.Join(wd, "node_modules", dep, "package.json")); err != nil {
				return fmt.Errorf("e2e/browser/node_modules/%s is missing", dep)
			}
		}
		return nil
	}, "node")
	return tl
}
