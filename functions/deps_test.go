package functions_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestBootstrapsLinkNoTestTooling: a function binary links the runtime
// (shared/lambdafn) and what it serves with, never the module's internal/
// packages (event synthesis, test servers and fixtures live there), a
// package named ...test, or the standard testing package. The deployment's
// flags select the dependencies (lambda.norpc, linux), so they are the
// ones listed.
func TestBootstrapsLinkNoTestTooling(t *testing.T) {
	for _, deps := range bootstrapDeps(t) {
		linksRuntime := false
		for _, d := range deps[1:] {
			own, ok := strings.CutPrefix(d, module)
			switch {
			case d == module+"shared/lambdafn":
				linksRuntime = true
			case d == "testing",
				ok && (strings.HasPrefix(own, "internal/") || strings.HasSuffix(own, "test")):
				t.Errorf("%s links %s", deps[0], d)
			}
		}
		if !linksRuntime {
			t.Errorf("%s does not link shared/lambdafn: the check lists the wrong packages", deps[0])
		}
	}
}

const module = "github.com/tablebridge/tablebridge/"

// bootstrapDeps lists each function binary's package and its
// dependencies, built as the deployment builds them (lambda.norpc, linux,
// no cgo): the first field of each line is the function's package.
func bootstrapDeps(t *testing.T) [][]string {
	t.Helper()
	pkgs := []string{"./purgetables"}
	for _, name := range functionNames() {
		pkgs = append(pkgs, "./"+name)
	}
	cmd := exec.Command("go", append([]string{"list", "-tags", "lambda.norpc",
		"-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, pkgs...)...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pkgs) {
		t.Fatalf("go list listed %d packages, want %d", len(lines), len(pkgs))
	}
	deps := make([][]string, len(lines))
	for i, line := range lines {
		deps[i] = strings.Fields(line)
	}
	return deps
}

// TestBootstrapsLinkNoEmbeddedStore: the functions serve from DynamoDB
// only, so their binaries (and their cold starts and sizes) carry none of
// the local server's embedded stores: not Pebble, not bbolt, and none of
// the packages over them.
func TestBootstrapsLinkNoEmbeddedStore(t *testing.T) {
	forbidden := []string{
		"github.com/cockroachdb/pebble",
		"go.etcd.io/bbolt",
		module + "shared/store/pebblestore",
		module + "shared/store/boltstore",
		module + "shared/store/memstore",
	}
	for _, deps := range bootstrapDeps(t) {
		for _, d := range deps[1:] {
			for _, f := range forbidden {
				if d == f || strings.HasPrefix(d, f+"/") {
					t.Errorf("%s links %s", deps[0], d)
				}
			}
		}
	}
}
