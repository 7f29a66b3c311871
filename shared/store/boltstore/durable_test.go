package boltstore

import (
	"context"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestReadsWaitForTheCommitTheyRead: bbolt lets a read transaction see a
// commit once its meta page is written, before its fdatasync ends. Every
// read must then wait for that commit's sync before it answers. The test
// opens that window by hand: it forgets that the last commit was synced,
// starts every kind of read, checks that none answers while the window is
// open, then records the sync and checks each answers what it read. Any
// answer within 200 ms of the open window is the failure (a slower one
// would only go unnoticed); everything is bounded by 10 s, so a hang fails
// rather than hangs.
func TestReadsWaitForTheCommitTheyRead(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	s, _ := openTemp(t)
	defer s.Close()
	if _, err := s.CreateTable(ctx, "acct", "tbl"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetServiceProperties(ctx, "acct", []byte("<StorageServiceProperties/>")); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, "acct", "tbl", []store.Op{{Kind: store.OpInsert, Entity: entity("p", "r", time.Unix(1, 0), map[string]edm.Value{"A": edm.NewInt32(1)})}}); err != nil {
		t.Fatal(err)
	}
	var last int
	if err := s.db.View(func(tx *bolt.Tx) error { last = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	synced := s.durable
	s.durable = store.NewDurable(uint64(last - 1)) // the last commit visible, its sync not yet over
	defer func() { s.durable = synced }()

	reads := map[string]func() error{
		"GetEntity": func() error { _, err := s.GetEntity(ctx, "acct", "tbl", "p", "r"); return err },
		"QueryEntities": func() error {
			page, err := s.QueryEntities(ctx, "acct", "tbl", store.Query{})
			if err == nil && len(page.Entities) != 1 {
				t.Errorf("QueryEntities: %d entities, want 1", len(page.Entities))
			}
			return err
		},
		"GetTable":             func() error { _, err := s.GetTable(ctx, "acct", "tbl"); return err },
		"QueryTables":          func() error { _, err := s.QueryTables(ctx, "acct", store.TableQuery{}); return err },
		"GetServiceProperties": func() error { _, err := s.GetServiceProperties(ctx, "acct"); return err },
		"Accounts":             func() error { _, err := s.Accounts(ctx); return err },
	}
	type answer struct {
		read   string
		err    error
		synced bool // the commit was recorded on disk when the read answered
	}
	answered := make(chan answer, len(reads))
	for name, read := range reads {
		go func() {
			err := read()
			answered <- answer{name, err, s.durable.Done() >= uint64(last)}
		}()
	}
	select {
	case a := <-answered:
		t.Fatalf("%s answered (%v) while the commit it read was not on disk", a.read, a.err)
	case <-time.After(200 * time.Millisecond):
	}
	s.durable.Synced(uint64(last))
	for range reads {
		a := <-answered
		if a.err != nil || !a.synced {
			t.Errorf("%s once the commit was on disk: %v (synced: %v)", a.read, a.err, a.synced)
		}
	}
}
