package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

// TestMigrateFollowUntilIdle: -follow -until idle copies, follows until a
// pass finds nothing written within the margin, ends with a final pass that
// compares keys, and leaves a copy verify finds equal.
func TestMigrateFollowUntilIdle(t *testing.T) {
	t.Parallel()
	src, dst := protocoltest.New(t), protocoltest.New(t)
	seedTable(t, src.Store, "Orders", 300, 3)
	cp := filepath.Join(t.TempDir(), "cp.json")
	args := []string{"-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-checkpoint", cp, "-progress", "none",
		"-follow", "-until", "idle", "-follow-interval", "10ms", "-follow-margin", "1s", "-sweep-every", "2"}
	code, out, errOut := runCmd(t, migrateFn, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	passes := regexp.MustCompile(`(?m)^pass \d+: \d+ entities copied, \d+ deleted(, keys compared)?; lag \S+ \(deletes \S+\)$`)
	final := regexp.MustCompile(`(?m)^final pass \d+: 0 entities copied, 0 deleted, keys compared; lag `)
	for _, want := range []string{"Orders: 300 entities copied", "Orders: following: ", "followed the source for "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !passes.MatchString(out) || !final.MatchString(out) || strings.Contains(out, "already complete") {
		t.Errorf("want pass lines and a final pass:\n%s", out)
	}
	code, out, errOut = runCmd(t, verifyFn, "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-progress", "none")
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s\n%s", code, out, errOut)
	}
}

func TestMigrateFollowFlags(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-until", "idle"}, "need -follow"},
		{[]string{"-sweep-every", "3"}, "need -follow"},
		{[]string{"-follow", "-until", "never"}, `unknown -until "never"`},
		{[]string{"-follow", "-follow-margin", "0s"}, "must be positive"},
		{[]string{"-follow", "-dry-run"}, "-follow and -dry-run"},
	} {
		args := append([]string{"-from", src.ConnectionString(), "-to", src.ConnectionString(), "-checkpoint", "", "-progress", "none"}, tc.args...)
		code, _, errOut := runCmd(t, migrateFn, args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// cancelOn cancels when a line containing marker is written, as a Ctrl-C
// at that moment would.
type cancelOn struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	cancel context.CancelFunc
}

func (w *cancelOn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.marker) {
		w.cancel()
	}
	return len(p), nil
}

// TestMigrateFollowInterrupt: an interrupt after the bulk copy ends the
// follow with a final pass and exit status 0. (One during the bulk copy
// interrupts it: TestFollowStopDuringBulkCopy in internal/migrate.)
func TestMigrateFollowInterrupt(t *testing.T) {
	t.Parallel()
	src, dst := protocoltest.New(t), protocoltest.New(t)
	seedTable(t, src.Store, "Orders", 300, 3)
	cp := filepath.Join(t.TempDir(), "cp.json")
	args := []string{"-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-checkpoint", cp, "-progress", "none",
		"-follow", "-follow-interval", "10ms"}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var errOut bytes.Buffer
	w := &cancelOn{marker: "\npass 2:", cancel: cancel}
	if err := migrateCmd(ctx, args, w, &errOut); err != nil {
		t.Fatalf("interrupted while following: %v\n%s", err, w.buf.String())
	}
	got := w.buf.String()
	if !regexp.MustCompile(`(?m)^final pass \d+: .*keys compared`).MatchString(got) || !strings.Contains(got, "Orders: 300 entities copied") {
		t.Errorf("want the copy, passes and a final pass:\n%s", got)
	}
}
