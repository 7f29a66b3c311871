package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

// TestRecoverTablesOfAnUpperCaseAccountPath: before account names resolved
// in any case to the configured account (SECURITY.md, "What a signature
// covers"), a request to
// /DEVSTOREACCOUNT1/... signed by devstoreaccount1 stored its tables in a
// bbolt account bucket of that spelling. The API no longer reaches that
// bucket; docs/troubleshooting.md's recovery, export -store bolt
// -account DEVSTOREACCOUNT1 then import into devstoreaccount1, brings the
// tables back. The store layout did not change, so the store itself writes
// exactly what the old server wrote.
func TestRecoverTablesOfAnUpperCaseAccountPath(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	dbPath := filepath.Join(data, "tablebridge.db")
	st, err := boltstore.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const oldAccount = "DEVSTOREACCOUNT1"
	if _, err := st.CreateTable(ctx, oldAccount, "Upper"); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, oldAccount, "Upper", []store.Op{{Kind: store.OpInsert, Entity: &model.Entity{PartitionKey: "p", RowKey: "r"}}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "export")
	code, stdout, stderr := runCmd(t, exportFn, "-store", "bolt", "-data", data, "-account", oldAccount, "-out", out, "-progress", "none")
	if code != 0 || !strings.Contains(stdout, "1 tables, 1 entities exported") {
		t.Fatalf("export: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCmd(t, importFn, "-in", out, "-store", "bolt", "-data", data, "-checkpoint", "", "-progress", "none")
	if code != 0 || !strings.Contains(stdout, "1 tables, 1 entities copied") {
		t.Fatalf("import: exit %d\n%s\n%s", code, stdout, stderr)
	}

	st, err = boltstore.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if n := countEntities(t, st, "Upper"); n != 1 {
		t.Fatalf("devstoreaccount1's Upper holds %d entities after the recovery, want 1", n)
	}
}
