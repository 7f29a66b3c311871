package localproc

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestModuleRoot(t *testing.T) {
	t.Run("from a subfolder", func(t *testing.T) {
		root := t.TempDir()
		writeGoMod(t, root)
		sub := filepath.Join(root, "a", "b")
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Chdir(sub)
		if got, err := ModuleRoot(); err != nil || got != root {
			t.Fatalf("ModuleRoot() = %q, %v; want %q", got, err, root)
		}
	})
	t.Run("nearest go.mod wins", func(t *testing.T) {
		outer := t.TempDir()
		inner := filepath.Join(outer, "inner")
		writeGoMod(t, outer)
		writeGoMod(t, inner)
		t.Chdir(inner)
		if got, err := ModuleRoot(); err != nil || got != inner {
			t.Fatalf("ModuleRoot() = %q, %v; want %q", got, err, inner)
		}
	})
	t.Run("none", func(t *testing.T) {
		wd := t.TempDir()
		t.Chdir(wd)
		_, err := ModuleRoot()
		if !errors.Is(err, ErrNoModuleRoot) || err.Error() != "no go.mod above "+wd {
			t.Fatalf("ModuleRoot() error = %v, want ErrNoModuleRoot reading %q", err, "no go.mod above "+wd)
		}
	})
}

// writeGoMod makes dir, and a go.mod in it.
func writeGoMod(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
