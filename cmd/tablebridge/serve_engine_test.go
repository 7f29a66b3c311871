package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// serveLines starts serve on dir with -store storeKind, returns its
// start-up lines, and stops it.
func serveLines(t *testing.T, dir, storeKind string) []string {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	lines, done := serveUntil(t, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: dir, storeKind: storeKind,
		accounts: auth.AccountList{auth.DevStoreAccount()}},
		func(line string) bool { return strings.Contains(line, "DefaultEndpointsProtocol=") })
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	return lines
}

// TestServeChoosesTheEngine: a new data directory gets pebble; one an
// earlier release wrote (its bbolt file) stays on bolt, and serve says so
// and how to move it; -store bolt serves it without the note, and -store
// pebble serves a pebble store beside it, saying that the bbolt one is not
// served.
func TestServeChoosesTheEngine(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	lines := serveLines(t, dir, engineAuto)
	if !strings.Contains(lines[0], "(store: pebble "+filepath.Join(dir, pebbleDirName)+")") || strings.Contains(strings.Join(lines, "\n"), "bbolt") {
		t.Errorf("serve on a new directory: %q; want pebble, without a note", lines)
	}
	if _, err := os.Stat(filepath.Join(dir, dataFileName)); err == nil {
		t.Errorf("serve on a new directory made a bbolt file")
	}

	old := filepath.Join(t.TempDir(), "old")
	serveLines(t, old, engineBolt) // an earlier release's directory: the bbolt file alone
	for _, c := range []struct {
		store, opened, note string
	}{
		{engineAuto, "bolt", "so serve keeps serving it with bolt"},
		{engineBolt, "bolt", ""},
		{enginePebble, "pebble", "which -store pebble does not serve"},
	} {
		lines := strings.Join(serveLines(t, old, c.store), "\n")
		if !strings.Contains(lines, "(store: "+c.opened+" ") {
			t.Errorf("-store %s on a bbolt directory opened: %q; want %s", c.store, lines, c.opened)
		}
		if move := "tablebridge migrate -from-data " + old + " -store pebble -data " + old + "-pebble"; c.note == "" {
			if strings.Contains(lines, "bbolt") {
				t.Errorf("-store %s printed a note: %q", c.store, lines)
			}
		} else if !strings.Contains(lines, c.note) || !strings.Contains(lines, move) {
			t.Errorf("-store %s on a bbolt directory: %q; want %q and %q", c.store, lines, c.note, move)
		}
	}
}
