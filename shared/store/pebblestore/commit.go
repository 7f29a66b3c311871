package pebblestore

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablebridge/tablebridge/shared/store"
)

// commit runs one write: under the write lock, prepare reads what it needs
// and returns the batch to apply (or the failure of a condition, or a nil
// batch for nothing to do); the batch goes into the engine's log and
// memtable, then applied (when not nil) updates what the store keeps in
// memory beside the engine, the lock is released, and commit waits for the
// log's sync.
// Writers that arrive meanwhile check and apply their own batches, and
// Pebble's log writer syncs all that queued during one sync with the
// next: concurrent writes share one fsync, and the next group forms while
// one syncs. A write returns only once its batch is on disk.
func (s *Store) commit(ctx context.Context, prepare func() (*pebble.Batch, error), applied func()) error {
	select {
	case s.writeSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	b, seq, refused, err := s.apply(prepare, applied)
	switch {
	case err != nil:
		return err
	case b == nil:
		// A condition failed, or there was nothing to write: the answer
		// depends on what the check read, which must be on disk before
		// it is told, as for a read.
		if err := s.sync.Wait(ctx, seq); err != nil {
			return err
		}
		return refused
	}
	err = b.SyncWait()
	b.Close()
	if err != nil {
		err = fmt.Errorf("pebblestore: sync the log: %w", err)
		s.fail(err)
		// The batch is in the log's buffer and may have reached the disk
		// in part or whole: a restart may or may not replay it.
		return fmt.Errorf("%w: %v", store.ErrOutcomeUnknown, err)
	}
	s.sync.Synced(seq)
	return nil
}

// apply runs prepare and applies its batch without waiting for the sync,
// holding the write lock throughout. It returns the batch and its number
// in the durability count; or, when prepare wrote nothing, a nil batch,
// the count of writes applied so far and prepare's error (a failed
// condition, or a panic of prepare's, which fails that write alone as the
// bolt store's committer does); or the error that stopped the store.
func (s *Store) apply(prepare func() (*pebble.Batch, error), applied func()) (b *pebble.Batch, seq uint64, refused, err error) {
	applying := false
	defer func() {
		<-s.writeSem
		v := recover()
		if v == nil {
			return
		}
		if f, ok := v.(fatalPanic); ok {
			err = f.err
		} else {
			err = &errPanicked{value: v, stack: debug.Stack()}
		}
		if !applying {
			// Nothing reached the engine.
			b, seq, refused, err = nil, s.sync.appliedCount(), err, nil
			return
		}
		// The engine failed applying the batch (its log had failed, for
		// one): the store stops, and the batch may already be in the log.
		s.fail(err)
		b, err = nil, fmt.Errorf("%w: %v", store.ErrOutcomeUnknown, err)
	}()
	b, refused = prepare()
	if refused != nil || b == nil {
		if b != nil {
			b.Close()
		}
		return nil, s.sync.appliedCount(), refused, nil
	}
	seq = s.sync.applying()
	applying = true
	if err := s.db.ApplyNoSyncWait(b, pebble.Sync); err != nil {
		err = fmt.Errorf("pebblestore: apply: %w", err)
		s.fail(err)
		return nil, 0, nil, fmt.Errorf("%w: %v", store.ErrOutcomeUnknown, err)
	}
	if applied != nil {
		applied()
	}
	applying = false
	return b, seq, nil, nil
}

// errPanicked is the error of a write whose preparation panicked: that
// write fails (500 InternalError, logged with the stack) and the server
// goes on, since nothing of it reached the engine.
type errPanicked struct {
	value any
	stack []byte
}

func (e *errPanicked) Error() string {
	return fmt.Sprintf("pebblestore: write panicked: %v\n%s", e.value, e.stack)
}

// durability counts writes as they are applied, and, in store.Durable,
// as their log syncs complete. Pebble makes a batch visible to readers
// once it is in the memtable, before its sync. Writes are applied and
// logged in one order (under the write lock), so when write n's sync
// completes every write before it is on disk too.
type durability struct {
	applied atomic.Uint64 // writes applied or being applied
	*store.Durable
}

func (d *durability) init() { d.Durable = store.NewDurable(0) }

// applying counts a write about to be applied and returns its number. It
// is counted before it becomes visible, so a reader that saw it and then
// reads the count waits for it.
func (d *durability) applying() uint64 { return d.applied.Add(1) }

// appliedCount is the number of the last write applied or being applied:
// what a read that has just finished may have seen.
func (d *durability) appliedCount() uint64 { return d.applied.Load() }
