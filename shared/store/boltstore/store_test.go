package boltstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

func openTemp(t testing.TB, opts ...Option) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "nested", "dir", "tables.db")
	s, err := Open(path, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s, path
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

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, path := openTemp(t)
	ts := time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)
	acl := []model.SignedIdentifier{{ID: "p", Expiry: ts, Permission: "r"}}
	e := entity("pk", "rk", ts, map[string]edm.Value{"D": edm.NewDouble(-0.5), "B": edm.NewBinary([]byte("x"))})
	if _, err := s.CreateTable(ctx, "acct", "KeepMe"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTableACL(ctx, "acct", "keepme", acl); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, "acct", "KEEPME", []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetServiceProperties(ctx, "acct", []byte("<props/>")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := Open(path)
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

func TestCloseWaitsForWritesInFlight(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	// Writes are queued and committing while Close runs: it runs once the
	// first group of writes has committed, while the others wait for the
	// next.
	committed := make(chan struct{})
	var once sync.Once
	s, path := openTemp(t, WithCommitObserver(func(int, time.Duration) { once.Do(func() { close(committed) }) }))
	if _, err := s.CreateTable(ctx, "acct", "tbl"); err != nil {
		t.Fatal(err)
	}
	const n = 32
	var wg sync.WaitGroup
	acked := make([]bool, n)
	started := make(chan struct{}, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := entity("pk", string(rune('A'+i)), time.Unix(int64(i), 0), nil)
			started <- struct{}{}
			err := s.Write(ctx, "acct", "tbl", []store.Op{{Kind: store.OpInsert, Entity: e}})
			switch {
			case err == nil:
				acked[i] = true
			case !errors.Is(err, ErrClosed):
				t.Errorf("write %d: %v", i, err)
			}
		}()
	}
	for range n {
		<-started
	}
	<-committed
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.GetTable(ctx, "acct", "tbl"); !errors.Is(err, ErrClosed) {
		t.Errorf("GetTable after Close = %v; want ErrClosed", err)
	}

	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ackedCount := 0
	for i := range n {
		_, err := s.GetEntity(ctx, "acct", "tbl", "pk", string(rune('A'+i)))
		if acked[i] {
			ackedCount++
			if err != nil {
				t.Errorf("acknowledged write %d lost: %v", i, err)
			}
		}
	}
	if ackedCount == 0 {
		t.Errorf("no write was acknowledged; the test proves nothing")
	}
}

func TestCorruptRecordsAreErrors(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	s, _ := openTemp(t)
	defer s.Close()
	if _, err := s.CreateTable(ctx, "acct", "tbl"); err != nil {
		t.Fatal(err)
	}
	good := entity("pk", "good", time.Unix(1, 0), map[string]edm.Value{"A": edm.NewInt32(1)})
	if err := s.Write(ctx, "acct", "tbl", []store.Op{{Kind: store.OpInsert, Entity: good}}); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		value []byte
	}{
		{"UnknownVersion", []byte{99, 2, 0, 0}},
		{"Empty", []byte{}},
		{"Truncated", []byte{1, 2}}, // version 1, then a cut-off Timestamp
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rk := "bad" + c.name
			putRaw(t, s, "acct", "tbl", entityKey("pk", rk), c.value)
			if _, err := s.GetEntity(ctx, "acct", "tbl", "pk", rk); !errors.Is(err, ErrCorrupt) {
				t.Errorf("GetEntity = %v; want ErrCorrupt", err)
			}
			_, err := s.QueryEntities(ctx, "acct", "tbl", store.Query{Top: 1000})
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("QueryEntities = %v; want ErrCorrupt", err)
			}
			for _, op := range []store.Op{
				{Kind: store.OpMerge, Entity: entity("pk", rk, time.Unix(2, 0), nil), Cond: store.CondExists},
				{Kind: store.OpReplace, Entity: entity("pk", rk, time.Unix(2, 0), nil), Cond: store.CondTimestamp, Timestamp: time.Unix(1, 0)},
			} {
				err := s.Write(ctx, "acct", "tbl", []store.Op{op})
				var opErr *store.OpError
				if !errors.Is(err, ErrCorrupt) || !errors.As(err, &opErr) {
					t.Errorf("%s over a corrupt record = %v; want an OpError wrapping ErrCorrupt", op.Kind, err)
				}
			}
			// Replace without condition and delete do not read the record,
			// so they repair it.
			if err := s.Write(ctx, "acct", "tbl", []store.Op{{Kind: store.OpDelete, Entity: entity("pk", rk, time.Time{}, nil)}}); err != nil {
				t.Errorf("delete of a corrupt record: %v", err)
			}
			if _, err := s.GetEntity(ctx, "acct", "tbl", "pk", good.RowKey); err != nil {
				t.Errorf("good entity: %v", err)
			}
		})
	}
	t.Run("CorruptTableInfo", func(t *testing.T) {
		if _, err := s.CreateTable(ctx, "acct", "broken"); err != nil {
			t.Fatal(err)
		}
		if err := s.update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketAccounts).Bucket([]byte("acct")).Bucket(bucketCatalog).Put([]byte("broken"), []byte{7})
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetTable(ctx, "acct", "broken"); !errors.Is(err, ErrCorrupt) {
			t.Errorf("GetTable = %v; want ErrCorrupt", err)
		}
		if _, err := s.QueryTables(ctx, "acct", store.TableQuery{Top: 10}); !errors.Is(err, ErrCorrupt) {
			t.Errorf("QueryTables = %v; want ErrCorrupt", err)
		}
	})
}

func putRaw(t *testing.T, s *Store, account, table string, key, value []byte) {
	t.Helper()
	err := s.update(func(tx *bolt.Tx) error {
		return entityBucket(tx, account, table).Put(key, value)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestOpenRefusesUnknownLayout(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	if err := s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyFormat, []byte{42})
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s, err := Open(path); !errors.Is(err, ErrCorrupt) {
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
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		path string
		opts []Option
	}{
		{"ParentIsAFile", filepath.Join(notADir, "tables.db"), nil},
		{"NotABoltFile", garbage, nil},
		{"BadBatch", filepath.Join(dir, "a.db"), []Option{WithMaxBatch(0)}},
		{"BadScanBudget", filepath.Join(dir, "b.db"), []Option{WithScanBudget(0, time.Second)}},
		{"BadOpenTimeout", filepath.Join(dir, "c.db"), []Option{WithOpenTimeout(0)}},
		{"BadMmapSize", filepath.Join(dir, "d.db"), []Option{WithInitialMmapSize(-1)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(c.path, c.opts...)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
	t.Run("LockedByAnotherStore", func(t *testing.T) {
		path := filepath.Join(dir, "locked.db")
		s, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		s2, err := Open(path, WithOpenTimeout(50*time.Millisecond))
		if err == nil {
			s2.Close()
			t.Fatal("second Open of a locked file succeeded")
		}
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("second Open: %v, want ErrLocked", err)
		}
	})
}
