package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestMoveRefusals: a move needs a new directory of its own and takes none
// of the flags of a selective or followed copy.
func TestMoveRefusals(t *testing.T) {
	t.Parallel()
	old := filepath.Join(t.TempDir(), "old")
	serveLines(t, old, engineBolt)
	used := filepath.Join(t.TempDir(), "used")
	serveLines(t, used, enginePebble)
	n := filepath.Join(t.TempDir(), "new")
	ctx := context.Background()
	st, err := openDataDir(used, enginePebble, "test", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.CreateTable(ctx, devAccount, "held"); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-from-data", old, "-store", "pebble", "-data", old}, "move into a new directory"},
		{[]string{"-from-data", old, "-from", "x", "-store", "pebble", "-data", n}, "not both"},
		{[]string{"-from-data", old, "-store", "pebble", "-data", n, "-tables", "t", "-checkpoint", "c"}, "-checkpoint, -tables do not apply"},
		{[]string{"-from-data", old, "-store", "dynamodb"}, "give -store pebble"},
		{[]string{"-from-data", old, "-from-store", "memory", "-store", "pebble", "-data", n}, `unknown -from-store "memory"`},
		{[]string{"-from-store", "bolt", "-store", "pebble", "-data", n}, "-from-store needs -from-data"},
		{[]string{"-from-data", old, "-store", "pebble", "-data", used}, "already holds tablebridge data (accounts devstoreaccount1)"},
		{[]string{"-from-data", filepath.Join(t.TempDir(), "none"), "-store", "bolt", "-data", n}, "holds no tablebridge data"},
	} {
		code, stdout, stderr := runCmd(t, migrateFn, append(c.args, "-progress", "none")...)
		if code == 0 || !strings.Contains(stdout+stderr, c.want) {
			t.Errorf("migrate %q: status %d, %q %q; want a refusal saying %q", c.args, code, stdout, stderr, c.want)
		}
	}
}
