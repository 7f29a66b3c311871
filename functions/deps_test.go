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
	const module = "github.com/tablebridge/tablebridge/"
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
	for _, line := range lines {
		deps := strings.Fields(line)
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
