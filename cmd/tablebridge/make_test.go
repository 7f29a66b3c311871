//go:build unix

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/internal/serveproc"
)

// The Makefile tests run make in the repository, as a newcomer does, with
// every output redirected to a temporary directory.

func makeCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if testing.Short() {
		t.Skip("runs make")
	}
	makeTool := serveproc.Require(t, "make", "install Debian's make (as root: apt-get install make)", nil, "make")
	root, err := localproc.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return exec.Command(makeTool, append([]string{"--no-print-directory", "-C", root}, args...)...)
}

// TestMakeRunStopsCleanly: Ctrl-C on make run (SIGINT to the foreground
// process group) stops the server with status 0, so make prints no error.
func TestMakeRunStopsCleanly(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	cmd := makeCmd(t, "run", "CLI="+filepath.Join(tmp, "tablebridge"), "LISTEN=127.0.0.1:0", "DATA="+filepath.Join(tmp, "data"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
		}
	}()
	waitListening(t, out)
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil { // what the terminal does
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("make run did not stop within 30 s of SIGINT:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "tablebridge shutting down") || strings.Contains(out.String(), "***") {
		t.Fatalf("make run after SIGINT:\n%s", out.String())
	}
}

// TestMakeCleanKeepsData: make clean removes build outputs only; the data
// goes with make clean-data.
func TestMakeCleanKeepsData(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	plan, err := makeCmd(t, "-n", "clean", "DATA="+data).CombinedOutput()
	if err != nil {
		t.Fatalf("make -n clean: %v\n%s", err, plan)
	}
	if strings.Contains(string(plan), data) || strings.Contains(string(plan), ".tablebridge") || !strings.Contains(string(plan), "rm -rf build bin") {
		t.Fatalf("make clean would run:\n%s", plan)
	}
	out, err := makeCmd(t, "clean-data", "DATA="+data).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "deleted "+data) {
		t.Fatalf("make clean-data: %v\n%s", err, out)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("make clean-data left %s: %v", data, err)
	}
}

// TestMakeNeedsSAM: without the SAM CLI, deploy and local-api say what to
// install before building anything.
func TestMakeNeedsSAM(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"deploy", "local-api"} {
		out, err := makeCmd(t, target, "SAM=tablebridge-test-no-such-sam").CombinedOutput()
		if err == nil || !strings.Contains(string(out), "the SAM CLI (tablebridge-test-no-such-sam) is needed: install it with 'pip install aws-sam-cli'") {
			t.Errorf("make %s: %v\n%s", target, err, out)
		}
		if strings.Contains(string(out), "go build") {
			t.Errorf("make %s built before finding sam missing:\n%s", target, out)
		}
	}
}

// TestMakeInstall: make install puts the command in GOBIN, stamped with
// the commit it was built from, and says when GOBIN is not on PATH.
func TestMakeInstall(t *testing.T) {
	t.Parallel()
	gobin := t.TempDir()
	cmd := makeCmd(t, "install")
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "installed "+filepath.Join(gobin, "tablebridge")) || !strings.Contains(string(out), gobin+" is not on your PATH") {
		t.Errorf("make install said:\n%s", out)
	}
	version, err := exec.Command(filepath.Join(gobin, "tablebridge"), "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	// What the Makefile stamps: git describe, the commit when no tag.
	if described, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output(); err == nil {
		if want := "tablebridge " + strings.TrimSpace(string(described)) + " ("; !strings.HasPrefix(string(version), want) {
			t.Errorf("version %q, want it to start with %q", version, want)
		}
	}
}
