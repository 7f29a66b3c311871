package migrate_test

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/model"
)

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	tables := map[string][]*model.Entity{"Edges": edgeEntities(t), "Orders": bulkEntities(2500, 5)}
	for name, es := range tables {
		seed(t, src.Store, name, es)
	}
	srcEP := openEndpoint(t, src.ConnectionString())
	for _, gz := range []bool{false, true} {
		name := "plain"
		if gz {
			name = "gzip"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for table := range tables {
				path := filepath.Join(dir, table+".ndjson")
				if gz {
					path += ".gz"
				}
				f, err := os.Create(path)
				if err != nil {
					t.Fatal(err)
				}
				var w io.Writer = f
				var zw *gzip.Writer
				if gz {
					zw = gzip.NewWriter(f)
					w = zw
				}
				n, err := migrate.ExportTable(ctxFor(t), srcEP, table, w, fastBackoff, nil)
				if err != nil {
					t.Fatal(err)
				}
				if zw != nil {
					zw.Close()
				}
				f.Close()
				if n != int64(len(tables[table])) {
					t.Fatalf("exported %d of %s, want %d", n, table, len(tables[table]))
				}
				paths = append(paths, path)
			}
			files, err := migrate.NewFileSource(paths)
			if err != nil {
				t.Fatal(err)
			}
			defer files.Close()
			dst := protocoltest.New(t)
			cp := filepath.Join(dir, "import.json")
			res, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: files, Dest: openEndpoint(t, dst.ConnectionString()), Checkpoint: cp, Rename: map[string]string{"Orders": "Imported"}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Entities != int64(len(tables["Edges"])+len(tables["Orders"])) {
				t.Fatalf("imported %d entities", res.Entities)
			}
			assertSameEntities(t, "Edges", tables["Edges"], readAll(t, dst.Store, "Edges"))
			assertSameEntities(t, "Imported", tables["Orders"], readAll(t, dst.Store, "Imported"))
			// The files themselves verify against the source.
			verifyClean(t, migrate.VerifyOptions{Source: srcEP, Dest: files, Tables: []string{"Edges", "Orders"}})
		})
	}
}

func TestImportResumesFromAnOffset(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	want := bulkEntities(1000, 4)
	seed(t, src.Store, "Orders", want)
	path := filepath.Join(t.TempDir(), "orders.ndjson")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := migrate.ExportTable(ctxFor(t), openEndpoint(t, src.ConnectionString()), "Orders", f, fastBackoff, nil); err != nil {
		t.Fatal(err)
	}
	f.Close()
	files, err := migrate.NewFileSource([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	defer files.Close()
	dst := protocoltest.New(t)
	cp := filepath.Join(t.TempDir(), "cp.json")
	ctx := ctxFor(t)
	log := &pageLog{Source: files}
	opts := migrate.Options{Source: log, Dest: openEndpoint(t, dst.ConnectionString()), Checkpoint: cp, PageSize: 100, Parallel: 1, Writers: 1}
	stopCtx, cancel := contextCancelledAfterPages(ctx, log, 4)
	defer cancel()
	if _, err := migrate.Migrate(stopCtx, opts); err == nil {
		t.Fatal("the interrupted import did not report the interruption")
	}
	c, _ := migrate.LoadCheckpoint(cp)
	if c == nil || c.Tables[0].Ranges[0].Next == nil || c.Tables[0].Ranges[0].Next.Offset == 0 || c.Tables[0].Ranges[0].Next.Offset%100 != 0 {
		t.Fatalf("checkpoint = %+v, want a page-aligned file offset", c)
	}
	res, err := migrate.Migrate(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tables[0].Resumed+res.Entities != 1000 {
		t.Fatalf("resumed %d + copied %d, want 1000", res.Tables[0].Resumed, res.Entities)
	}
	assertSameEntities(t, "Orders", want, readAll(t, dst.Store, "Orders"))
}

func TestNewFileSourceRejectsNonExports(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "x.ndjson")
	writeFile(t, path, `{"PartitionKey":"p","RowKey":"r"}`+"\n")
	if _, err := migrate.NewFileSource([]string{path}); err == nil || !strings.Contains(err.Error(), "header") {
		t.Fatalf("err = %v", err)
	}
}
