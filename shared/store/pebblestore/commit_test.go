package pebblestore

import (
	"context"
	"errors"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// logSyncGate holds the engine's log syncs while shut: a write is applied,
// and visible to readers, but not on disk until the gate opens.
type logSyncGate struct {
	mu   sync.Mutex
	shut chan struct{} // nil while open
}

func (g *logSyncGate) MaybeError(op errorfs.Op) error {
	if !strings.HasSuffix(op.Path, ".log") {
		return nil
	}
	switch op.Kind {
	case errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo:
		g.mu.Lock()
		shut := g.shut
		g.mu.Unlock()
		if shut != nil {
			<-shut
		}
	}
	return nil
}

func (g *logSyncGate) String() string { return "log sync gate" }

func (g *logSyncGate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.shut = make(chan struct{})
}

func (g *logSyncGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.shut != nil {
		close(g.shut)
		g.shut = nil
	}
}

// TestQueryMissingTableWaitsForItsSync: a query that finds no entity asks
// the table set whether the table exists, and that answer, like any it
// reads, must wait for the sync of the write it saw. Here the table is
// deleted (applied, its sync held back) while the query's Match holds the
// scan of the table's one entity, read before the delete; the query must
// not answer TableNotFound until the delete is on disk, since a crash
// before that brings the table back. Any answer within 200 ms of the held
// sync is the failure (a slower wrong answer would only go unnoticed);
// everything is bounded by 10 s, so a hang fails rather than hangs.
func TestQueryMissingTableWaitsForItsSync(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	gate := &logSyncGate{}
	s, err := Open("data", WithFS(errorfs.Wrap(vfs.NewMem(), gate)), WithMemory(1<<20, 1<<20), WithLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer gate.open()
	if _, err := s.CreateTable(ctx, "acct", "gone"); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, "acct", "gone", insert(entity("p", "r", time.Unix(1, 0), nil))); err != nil {
		t.Fatal(err)
	}

	deleteSeq := s.sync.appliedCount() + 1
	scanning, resume := make(chan struct{}), make(chan struct{})
	type answer struct {
		err    error
		synced bool // the delete was on disk when the query answered
	}
	answered := make(chan answer, 1)
	go func() {
		_, err := s.QueryEntities(ctx, "acct", "gone", store.Query{Match: func(*model.Entity) bool {
			close(scanning)
			<-resume
			return false
		}})
		answered <- answer{err, s.sync.Done() >= deleteSeq}
	}()
	select {
	case <-scanning:
	case a := <-answered:
		t.Fatalf("the query answered %v without reading the entity", a.err)
	}
	gate.close()
	deleted := make(chan error, 1)
	go func() { deleted <- s.DeleteTable(ctx, "acct", "gone") }()
	for s.tables.has("acct", "gone") {
		if ctx.Err() != nil {
			t.Fatal("the delete was never applied")
		}
		runtime.Gosched()
	}
	close(resume)

	select {
	case a := <-answered:
		t.Fatalf("the query answered %v while the delete it saw was not on disk", a.err)
	case <-time.After(200 * time.Millisecond):
	}
	gate.open()
	if a := <-answered; !errors.Is(a.err, store.ErrTableNotFound) || !a.synced {
		t.Errorf("once the delete was on disk the query answered %v (delete synced: %v); want table not found after the sync", a.err, a.synced)
	}
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
}

// TestAccountsWaitsForItsSync: listing the accounts reads the engine, which
// shows an account's first write before its sync; the answer waits for it.
// Any answer within 200 ms of the held sync is the failure; everything is
// bounded by 10 s.
func TestAccountsWaitsForItsSync(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	gate := &logSyncGate{}
	s, err := Open("data", WithFS(errorfs.Wrap(vfs.NewMem(), gate)), WithMemory(1<<20, 1<<20), WithLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer gate.open()
	gate.close()
	applied := s.sync.appliedCount()
	written := make(chan error, 1)
	go func() { written <- s.SetServiceProperties(ctx, "acct", []byte("<StorageServiceProperties/>")) }()
	for s.sync.appliedCount() == applied {
		if ctx.Err() != nil {
			t.Fatal("the write was never applied")
		}
		runtime.Gosched()
	}
	answered := make(chan []string, 1)
	go func() {
		accounts, err := s.Accounts(ctx)
		if err != nil {
			t.Error(err)
		}
		answered <- accounts
	}()
	select {
	case got := <-answered:
		t.Fatalf("Accounts answered %v while the write it saw was not on disk", got)
	case <-time.After(200 * time.Millisecond):
	}
	gate.open()
	if got := <-answered; len(got) != 1 || got[0] != "acct" {
		t.Errorf("Accounts once the write was on disk: %v; want [acct]", got)
	}
	if err := <-written; err != nil {
		t.Fatal(err)
	}
}
