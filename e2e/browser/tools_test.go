package browser_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// installHint names the script that installs what the test needs.
const installHint = "run infra/browser/install.sh (installs chromium when root, then npm ci in e2e/browser)"

// tools are the programs and files the browser test needs.
type tools struct {
	chromium string
	node     string
	goTool   string
	repoRoot string
	pageDir  string
}

// findTools locates everything or stops the test: a missing tool fails
// loudly in CI (env CI set) and skips elsewhere, naming install.sh.
func findTools(t *testing.T) tools {
	t.Helper()
	var missing []string
	var tl tools

	if env := os.Getenv("TABLEBRIDGE_CHROMIUM"); env != "" {
		if p, err := exec.LookPath(env); err == nil {
			tl.chromium = p
		}
	} else {
		for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
			if p, err := exec.LookPath(name); err == nil {
				tl.chromium = p
				break
			}
		}
	}
	if tl.chromium == "" {
		missing = append(missing, "chromium")
	}
	if p, err := exec.LookPath("node"); err == nil {
		tl.node = p
	} else {
		missing = append(missing, "node")
	}
	// go test puts its own GOROOT/bin first on PATH.
	if p, err := exec.LookPath("go"); err == nil {
		tl.goTool = p
	} else {
		missing = append(missing, "go")
	}

	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tl.pageDir = wd
	tl.repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	if !fileExists(filepath.Join(tl.repoRoot, "go.mod")) {
		t.Fatalf("no go.mod two levels above %s", wd)
	}
	for _, dep := range []string{"@azure/data-tables/package.json", "esbuild/package.json"} {
		if !fileExists(filepath.Join(wd, "node_modules", dep)) {
			missing = append(missing, "e2e/browser/node_modules/"+strings.TrimSuffix(dep, "/package.json"))
		}
	}

	if len(missing) > 0 {
		msg := "browser test needs " + strings.Join(missing, ", ") + ": " + installHint
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return tl
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
