package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/internal/testserver"
)

// TestMigrateFollowUntilIdle: -follow -until idle copies, follows until a
// pass finds nothing written within the margin, ends with a final pass that
// compares keys, and leaves a copy verify finds equal.
func TestMigrateFollowUntilIdle(t *testing.T) {
	src, dst := testserver.New(t), testserver.New(t)
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
	src := testserver.New(t)
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
