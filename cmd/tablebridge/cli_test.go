package main

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"os"
	"os/exec"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/serveproc"
)

// The CLI tests run the built command, as a user does, built once per test
// binary by serveproc (TestMain removes it).
func tablebridgeBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command")
	}
	return serveproc.Binary(t)
}

// cliResult is one run of the built command.
type cliResult struct {
	code           int
	stdout, stderr string
}

func runCLI(t *testing.T, dir string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(tablebridgeBinary(t), args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cliResult{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
}

func subcommandNames() []string {
	var names []string
	for name := range subcommands {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func TestCLIHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		r := runCLI(t, dir, args...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		for _, name := range append(subcommandNames(), "version") {
			if !strings.Contains(r.stdout, "\n  "+name+" ") {
				t.Errorf("%v: usage does not list %s:\n%s", args, name, r.stdout)
			}
		}
	}
	// A command of subcommands (dynamodb) lists them; each of them, and
	// every other command, lists its flags.
	groups := map[string][]string{"dynamodb": {"move-to-shared", "restore-table"}}
	for _, name := range subcommandNames() {
		for _, args := range [][]string{{name, "-h"}, {name, "--help"}, {"help", name}} {
			r := runCLI(t, dir, args...)
			listed := strings.Contains(r.stdout, "\n  -")
			for _, sub := range groups[name] {
				listed = strings.Contains(r.stdout, "\n"+sub+" ")
				if !listed {
					break
				}
			}
			if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: tablebridge "+name) || !listed {
				t.Errorf("%v: exit %d, stdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
			}
		}
		for _, sub := range groups[name] {
			r := runCLI(t, dir, name, sub, "-h")
			if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "\n  -") {
				t.Errorf("%s %s -h: exit %d, stdout:\n%s\nstderr:\n%s", name, sub, r.code, r.stdout, r.stderr)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("help wrote into the working directory: %v", entries)
	}
}

// TestCLIErrorsOnce: a bad command line is one line on stderr, status 2,
// saying where the usage is.
func TestCLIErrorsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no subcommand given"},
		{[]string{"nosuch"}, `unknown subcommand "nosuch"`},
		{[]string{"help", "nosuch"}, `unknown subcommand "nosuch"`},
		{[]string{"serve", "-bogus"}, "flag provided but not defined: -bogus (see tablebridge serve -h)"},
		{[]string{"serve", "extra"}, `unexpected argument "extra"`},
		{[]string{"migrate", "-bogus"}, "-bogus (see tablebridge migrate -h)"},
		{[]string{"migrate", "-to", "x"}, "-from is required"},
		{[]string{"export", "-parallel", "many"}, `invalid value "many" for flag -parallel`},
		{[]string{"bench", "-clients"}, "flag needs an argument: -clients"},
	} {
		r := runCLI(t, dir, tc.args...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || (tc.args != nil && len(lines) != 1) || r.stdout != "" {
			t.Errorf("%v: exit %d, want 2 and one line with %q; stdout:\n%s\nstderr:\n%s", tc.args, r.code, tc.want, r.stdout, r.stderr)
		}
		if strings.Count(r.stderr, tc.want) != 1 {
			t.Errorf("%v: the error is printed %d times:\n%s", tc.args, strings.Count(r.stderr, tc.want), r.stderr)
		}
	}
}

func TestCLIVersion(t *testing.T) {
	t.Parallel()
	r := runCLI(t, t.TempDir(), "version")
	if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "tablebridge ") || !strings.Contains(r.stdout, "go1.") {
		t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// Built inside a git clone, the binary carries its commit (a linked
	// worktree, or GOFLAGS=-buildvcs=false, leaves it out; make install
	// then stamps it with -ldflags).
	info, err := buildinfo.ReadFile(tablebridgeBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	want := "tablebridge devel (go1."
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			want = "commit " + s.Value[:12]
		}
	}
	if !strings.Contains(r.stdout, want) {
		t.Errorf("version %q lacks %q", r.stdout, want)
	}
	if r2 := runCLI(t, t.TempDir(), "--version"); r2.stdout != r.stdout {
		t.Errorf("--version %q, version %q", r2.stdout, r.stdout)
	}
}

// TestVersionOverride: make install stamps -X main.version; the commit is
// still shown. It sets the package's version, so it stays serial.
func TestVersionOverride(t *testing.T) {
	defer func(v string) { version = v }(version)
	version = "v1.2.3-4-gabcdef"
	got := versionString()
	if !strings.HasPrefix(got, "v1.2.3-4-gabcdef (") {
		t.Fatalf("versionString() = %q", got)
	}
	if info, ok := debug.ReadBuildInfo(); ok && !strings.Contains(got, info.GoVersion) {
		t.Errorf("versionString() = %q lacks %s", got, info.GoVersion)
	}
}

// waitFor polls cond for up to d.
func waitFor(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cond()
}

// startCLI starts the built command and returns it with its combined
// output, which grows while it runs.
func startCLI(t *testing.T, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(tablebridgeBinary(t), args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, out
}

// syncBuffer is a bytes.Buffer a child process writes while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
