package pebblestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

// testMemory keeps the tests' engines small: many run at once.
var testMemory = WithMemory(1<<20, testMemTableBytes)

const testMemTableBytes = 1 << 20

func openTemp(t testing.TB, opts ...Option) (*Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "nested", "pebble")
	s, err := Open(dir, append([]Option{testMemory, WithLog(io.Discard)}, opts...)...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, dir
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := openTemp(t)
		return s
	})
}

// TestConformanceTinyScanBudget runs the suite with a budget of one row per
// page, so every query pages through short and empty pages.
func TestConformanceTinyScanBudget(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the full suite again")
	}
	storetest.Run(t, func(t *testing.T) store.Store {
		s, _ := openTemp(t, WithScanBudget(1, time.Hour))
		return s
	})
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func entity(pk, rk string, ts time.Time, p map[string]edm.Value) *model.Entity {
	return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: ts, Properties: p}
}

func insert(e *model.Entity) []store.Op { return []store.Op{{Kind: store.OpInsert, Entity: e}} }

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, dir := openTemp(t)
	ts := time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)
	acl := []model.SignedIdentifier{{ID: "p", Expiry: ts, Permission: "r"}}
	e := entity("pk", "rk", ts, map[string]edm.Value{"D": edm.NewDouble(-0.5), "B": edm.NewBinary([]byte("x"))})
	if _, err := s.CreateTable(ctx, "acct", "KeepMe"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTableACL(ctx, "acct", "keepme", acl); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, "acct", "KEEPME", insert(e)); err != nil {
		t.Fatal(err)
	}
	if err := s.SetServiceProperties(ctx, "acct", []byte("<props/>")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(dir, testMemory)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	defer s.Close()
	info, err := s.GetTable(ctx, "acct", "keepme")
	if err != nil || info.Name != "KeepMe" || len(info.ACL) != 1 || info.ACL[0].ID != "p" || !info.ACL[0].Expiry.Equal(ts) {
		t.Errorf("table after reopen = %+v, %v", info, err)
	}
	got, err := s.GetEntity(ctx, "acct", "KeepMe", "pk", "rk")
	if err != nil || !got.Timestamp.Equal(ts) || !got.Properties["D"].Equal(e.Properties["D"]) || !got.Properties["B"].Equal(e.Properties["B"]) {
		t.Errorf("entity after reopen = %+v, %v", got, err)
	}
	if doc, err := s.GetServiceProperties(ctx, "acct"); err != nil || string(doc) != "<props/>" {
		t.Errorf("service properties after reopen = %q, %v", doc, err)
	}
	if accounts, err := s.Accounts(ctx); err != nil || len(accounts) != 1 || accounts[0] != "acct" {
		t.Errorf("Accounts = %q, %v", accounts, err)
	}
}

// TestDeleteTableIsOneRangeDeletion: Delete Table logs the catalog
// deletion and one range deletion, a few dozen bytes however many entities
// the table holds, leaves the neighbouring table (whose name the deleted
// one's is a prefix of) whole, and a table created again under the name
// starts empty.
func TestDeleteTableIsOneRangeDeletion(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t)
	defer s.Close()
	for _, table := range []string{"big", "bigger"} {
		if _, err := s.CreateTable(ctx, "acct", table); err != nil {
			t.Fatal(err)
		}
		for batch := range 10 {
			ops := make([]store.Op, 100)
			for i := range ops {
				rk := fmt.Sprintf("r%04d", batch*100+i)
				ops[i] = store.Op{Kind: store.OpInsert, Entity: entity("p", rk, time.Unix(1, 0), map[string]edm.Value{"S": edm.NewString(rk)})}
			}
			if err := s.Write(ctx, "acct", table, ops); err != nil {
				t.Fatal(err)
			}
		}
	}
	logged := s.db.Metrics().WAL.BytesIn
	if err := s.DeleteTable(ctx, "acct", "big"); err != nil {
		t.Fatal(err)
	}
	if n := s.db.Metrics().WAL.BytesIn - logged; n > 100 {
		t.Errorf("Delete Table of 1000 entities logged %d bytes; want one range deletion", n)
	}
	prefix := tablePrefix("acct", "big")
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: componentPast(bytes.Clone(prefix))})
	if err != nil {
		t.Fatal(err)
	}
	if it.First() {
		t.Errorf("entity %q left after Delete Table", it.Key())
	}
	it.Close()
	page, err := s.QueryEntities(ctx, "acct", "bigger", store.Query{Top: 1000})
	if err != nil || len(page.Entities) != 1000 {
		t.Errorf("the neighbouring table holds %d entities, %v; want 1000", len(page.Entities), err)
	}
	if _, err := s.CreateTable(ctx, "acct", "BIG"); err != nil {
		t.Fatal(err)
	}
	page, err = s.QueryEntities(ctx, "acct", "big", store.Query{Top: 1000})
	if err != nil || len(page.Entities) != 0 {
		t.Errorf("re-created table holds %d entities, %v", len(page.Entities), err)
	}
}

func TestOpenRefusesUnknownLayout(t *testing.T) {
	t.Parallel()
	s, dir := openTemp(t)
	if err := s.db.Set(keyFormat, []byte{42}, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(dir, testMemory); !errors.Is(err, ErrCorrupt) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open of a future layout = %v; want ErrCorrupt", err)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notADir := filepath.Join(dir, "file")
	if err := os.WriteFile(notADir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		dir  string
		opts []Option
	}{
		{"ParentIsAFile", filepath.Join(notADir, "pebble"), nil},
		{"BadScanBudget", filepath.Join(dir, "b"), []Option{WithScanBudget(0, time.Second)}},
		{"BadOpenTimeout", filepath.Join(dir, "c"), []Option{WithOpenTimeout(0)}},
		{"BadMemory", filepath.Join(dir, "d"), []Option{WithMemory(0, 1<<20)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(c.dir, c.opts...)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
	t.Run("LockedByAnotherStore", func(t *testing.T) {
		path := filepath.Join(dir, "locked")
		s, err := Open(path, testMemory)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := Open(path, testMemory, WithOpenTimeout(50*time.Millisecond))
		if err == nil {
			s2.Close()
			t.Fatal("second Open of a locked directory succeeded")
		}
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("second Open: %v, want ErrLocked", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2, err = Open(path, testMemory)
		if err != nil {
			t.Fatalf("Open after the holder closed: %v", err)
		}
		s2.Close()
	})
}

// TestWriteThatPanicsFailsAlone: a write whose preparation panics fails
// with the panic and its stack (500 InternalError through the service),
// the write lock is released, and the store goes on.
func TestWriteThatPanicsFailsAlone(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t)
	defer s.Close()
	err := s.commit(ctx, func() (*pebble.Batch, error) { panic("boom") }, nil)
	var p *errPanicked
	if !errors.As(err, &p) || !strings.Contains(err.Error(), "boom") || !strings.Contains(err.Error(), "TestWriteThatPanicsFailsAlone") {
		t.Fatalf("commit of a panicking write = %v; want errPanicked with the stack", err)
	}
	if _, err := s.CreateTable(ctx, "acct", "after"); err != nil {
		t.Fatalf("write after the panic: %v", err)
	}
}

// TestWriteGivesUpWhileWaiting: a write whose request ends while it waits
// for the write lock returns the context's error (503 ServerBusy) and is
// never applied.
func TestWriteGivesUpWhileWaiting(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t)
	defer s.Close()
	if _, err := s.CreateTable(ctx, "acct", "tbl"); err != nil {
		t.Fatal(err)
	}
	s.writeSem <- struct{}{} // another write holds the lock
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	err := s.Write(short, "acct", "tbl", insert(entity("p", "r", time.Unix(1, 0), nil)))
	<-s.writeSem
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write behind a held lock = %v; want the context's deadline", err)
	}
	if _, err := s.GetEntity(ctx, "acct", "tbl", "p", "r"); !errors.Is(err, store.ErrEntityNotFound) {
		t.Errorf("the abandoned write: GetEntity = %v; want not found", err)
	}
}

// TestWriteAheadLogIsWrittenAhead: the write-ahead log's preallocation is
// written (zeros), not reserved, so its records overwrite blocks the file
// already has and each sync writes no new size (writtenWALFS); a store
// reopened over such a log reads its records and stops at the zeros.
func TestWriteAheadLogIsWrittenAhead(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, dir := openTemp(t)
	if _, err := s.CreateTable(ctx, "acct", "T"); err != nil {
		t.Fatal(err)
	}
	e := entity("pk", "rk", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), nil)
	if err := s.Write(ctx, "acct", "T", insert(e)); err != nil {
		t.Fatal(err)
	}
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no write-ahead log in %s: %v", dir, err)
	}
	for _, name := range logs {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() < testMemTableBytes {
			t.Errorf("%s holds %d bytes; want its preallocation written, at least the memtable's %d", name, fi.Size(), testMemTableBytes)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, testMemory)
	if err != nil {
		t.Fatalf("reopen over a written-ahead log: %v", err)
	}
	defer s.Close()
	if got, err := s.GetEntity(ctx, "acct", "T", "pk", "rk"); err != nil || got.RowKey != "rk" {
		t.Errorf("after reopen: %v, %v", got, err)
	}
}
