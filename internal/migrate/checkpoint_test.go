package migrate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheckpointRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cp.json")
	cp := &Checkpoint{Version: checkpointVersion, Source: "src", Dest: "dst", KeepTimestamp: "Ts", Tables: []*TableState{{
		Source: "Orders", Dest: "Orders2", Total: 10,
		Ranges: []*RangeState{
			{Range: Range{Upper: "m"}, Next: &Continuation{NextPartitionKey: "1!8!bQ--", NextRowKey: "1!4!cg--"}, Copied: 4},
			{Range: Range{Lower: "m"}, Done: true, Copied: 6},
		},
	}}}
	f := newCheckpointFile(path, cp, 0)
	f.update(func(*Checkpoint) {})
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCheckpoint(path)
	if err != nil {
		t.Fatal(err)
	}
	tbl := got.table("orders")
	if tbl == nil || tbl.Dest != "Orders2" || tbl.Copied() != 10 || len(tbl.Ranges) != 2 {
		t.Fatalf("table = %+v", tbl)
	}
	if r := tbl.Ranges[0]; r.Upper != "m" || r.Next.NextPartitionKey != "1!8!bQ--" || r.Next.NextRowKey != "1!4!cg--" {
		t.Fatalf("range 0 = %+v", r)
	}
	if got.KeepTimestamp != "Ts" || got.Updated.IsZero() {
		t.Fatalf("checkpoint = %+v", got)
	}
	if got.table("nope") != nil {
		t.Fatal("found a table that is not there")
	}
}

func TestLoadCheckpointErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("missing file is no checkpoint", func(t *testing.T) {
		cp, err := LoadCheckpoint(filepath.Join(dir, "none.json"))
		if cp != nil || err != nil {
			t.Fatalf("= %v, %v", cp, err)
		}
	})
	for name, content := range map[string]string{
		"not json":      "{",
		"wrong version": `{"version":99}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadCheckpoint(p); err == nil {
				t.Fatal("no error")
			}
		})
	}
	t.Run("unreadable path", func(t *testing.T) {
		if _, err := LoadCheckpoint(dir); err == nil {
			t.Fatal("reading a directory did not fail")
		}
	})
}

func TestCheckpointFileWritesPeriodicallyAndOnlyWhenDirty(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cp.json")
	f := newCheckpointFile(path, &Checkpoint{Version: checkpointVersion}, 10*time.Millisecond)
	f.update(func(cp *Checkpoint) { cp.Source = "a" })
	deadline := time.Now().Add(5 * time.Second)
	for {
		if cp, _ := LoadCheckpoint(path); cp != nil && cp.Source == "a" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the background writer never wrote the checkpoint")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// Nothing changed: Flush must not rewrite the file.
	before, _ := os.Stat(path)
	time.Sleep(30 * time.Millisecond)
	if err := f.Flush(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !after.ModTime().Equal(before.ModTime()) {
		t.Error("a clean checkpoint was rewritten")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal("second Close:", err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("directory holds %d files, want only the checkpoint", len(entries))
	}
}

func TestCheckpointFileWithoutPath(t *testing.T) {
	t.Parallel()
	f := newCheckpointFile("", &Checkpoint{}, time.Millisecond)
	f.update(func(cp *Checkpoint) { cp.Source = "x" })
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointWriteFailureIsReported(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing-dir", "cp.json")
	f := newCheckpointFile(path, &Checkpoint{}, 0)
	f.update(func(cp *Checkpoint) { cp.Source = "x" })
	if err := f.Close(); err == nil {
		t.Fatal("writing into a missing directory did not fail")
	}
}

func TestWriteFileAtomicReplaces(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	for _, content := range []string{"first", "second, longer"} {
		if err := writeFileAtomic(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(path)
		if string(got) != content {
			t.Fatalf("file = %q, want %q", got, content)
		}
	}
}
