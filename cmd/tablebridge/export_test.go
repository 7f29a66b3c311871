package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

func exportFn(ctx context.Context, args []string, out, errw *bytes.Buffer) error {
	return exportCmd(ctx, args, out, errw)
}

func importFn(ctx context.Context, args []string, out, errw *bytes.Buffer) error {
	return importCmd(ctx, args, out, errw)
}

func TestExportImportCommands(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	seedTable(t, src.Store, "Orders", 700, 7)
	seedTable(t, src.Store, "Users", 30, 30)
	for _, gz := range []bool{false, true} {
		name := "plain"
		if gz {
			name = "gzip"
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			args := []string{"-from", src.ConnectionString(), "-out", dir, "-progress", "none"}
			if gz {
				args = append(args, "-gzip")
			}
			code, out, errOut := runCmd(t, exportFn, args...)
			if code != 0 || !strings.Contains(out, "2 tables, 730 entities exported") {
				t.Fatalf("export: exit %d\n%s\n%s", code, out, errOut)
			}
			ext := ".ndjson"
			if gz {
				ext += ".gz"
			}
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if strings.Join(names, ",") != "Orders"+ext+",Users"+ext {
				t.Fatalf("files = %v (temporary files must not remain)", names)
			}
			dst := protocoltest.New(t)
			code, out, errOut = runCmd(t, importFn, "-in", dir, "-to", dst.ConnectionString(), "-checkpoint", filepath.Join(t.TempDir(), "cp.json"), "-progress", "none")
			if code != 0 || !strings.Contains(out, "2 tables, 730 entities copied") {
				t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
			}
			if code, out, errOut := runCmd(t, verifyFn, "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-progress", "none"); code != 0 {
				t.Fatalf("verify: exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
	t.Run("one table to one gzip file", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "orders.ndjson.gz")
		code, out, errOut := runCmd(t, exportFn, "-from", src.ConnectionString(), "-tables", "orders", "-out", file, "-progress", "none")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		data, err := os.ReadFile(file)
		if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			t.Fatalf("%s is not gzip: %v", file, err)
		}
		dst := protocoltest.New(t)
		code, out, errOut = runCmd(t, importFn, "-in", file, "-to", dst.ConnectionString(), "-rename", "Orders:Restored", "-checkpoint", "", "-progress", "none")
		if code != 0 || countEntities(t, dst.Store, "Restored") != 700 {
			t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
		}
	})
	t.Run("usage", func(t *testing.T) {
		for name, tt := range map[string]struct {
			fn   func(context.Context, []string, *bytes.Buffer, *bytes.Buffer) error
			args []string
			want string
		}{
			"export without -out":         {exportFn, []string{"-from", src.ConnectionString()}, "-out is required"},
			"export without a source":     {exportFn, []string{"-out", t.TempDir()}, "-from or -store is required"},
			"export two tables to a file": {exportFn, []string{"-from", src.ConnectionString(), "-out", filepath.Join(t.TempDir(), "x.ndjson"), "-progress", "none"}, "2 tables are selected"},
			"import without -in":          {importFn, []string{"-to", src.ConnectionString()}, "-in is required"},
			"import of a missing file":    {importFn, []string{"-in", filepath.Join(t.TempDir(), "none.ndjson"), "-to", src.ConnectionString()}, "no such file"},
			"import of an empty dir":      {importFn, []string{"-in", t.TempDir(), "-to", src.ConnectionString()}, "holds no"},
			"import without destination":  {importFn, []string{"-in", t.TempDir()}, "-to or -store is required"},
		} {
			t.Run(name, func(t *testing.T) {
				code, _, errOut := runCmd(t, tt.fn, tt.args...)
				if code != 2 || !strings.Contains(errOut, tt.want) {
					t.Fatalf("exit %d:\n%s\nwant status 2 and %q", code, errOut, tt.want)
				}
			})
		}
	})
	t.Run("export of an unknown table", func(t *testing.T) {
		dir := t.TempDir()
		code, _, errOut := runCmd(t, exportFn, "-from", src.ConnectionString(), "-tables", "Nope", "-out", dir, "-progress", "none")
		if code != 1 || !strings.Contains(errOut, `table "Nope" is not in`) {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("%s holds %d files, want none", dir, len(entries))
		}
	})
	t.Run("import of a file that is not an export", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bad.ndjson")
		os.WriteFile(path, []byte("{}\n"), 0o644)
		code, _, errOut := runCmd(t, importFn, "-in", path, "-to", src.ConnectionString(), "-progress", "none")
		if code != 1 || !strings.Contains(errOut, "header") {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
	})
}

// TestExportAndVerifyProgressHaveTotals: export and verify count a table
// (keys only) before reading it, so their progress shows a total, a
// percentage and, while running, an ETA, as migrate's does.
func TestExportAndVerifyProgressHaveTotals(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	seedTable(t, src.Store, "Orders", 1500, 3)
	code, out, errOut := runCmd(t, exportFn, "-from", src.ConnectionString(), "-out", t.TempDir(), "-progress", "log")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"counting Orders\n", "exporting Orders: 1500 entities\n", "exporting Orders: 1500/1500 (100.0%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("export progress lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = runCmd(t, verifyFn, "-from", src.ConnectionString(), "-to", src.ConnectionString(), "-progress", "log")
	if code != 0 {
		t.Fatalf("verify: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"verifying Orders: 3000 entities\n", "verifying Orders: 3000/3000 (100.0%)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("verify progress lacks %q:\n%s", want, errOut)
		}
	}
}
