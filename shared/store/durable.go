package store

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
)

// Durable counts an embedded engine's writes as they reach the disk, so
// that no answer shows what a crash could still take back. An engine
// makes a write visible to readers before the sync that makes it durable
// ends (Pebble's memtable, bbolt's meta page written before its fdatasync);
// writes are numbered in the order they become visible and synced in that
// order, so a read that may have seen write n waits (Wait) until n is on
// disk before it answers.
type Durable struct {
	done atomic.Uint64 // every write up to this one is on disk

	mu      sync.Mutex
	changed chan struct{} // closed when done moves or the engine stops
	stopped bool
}

// NewDurable returns a count whose writes up to done are on disk.
func NewDurable(done uint64) *Durable {
	d := &Durable{changed: make(chan struct{})}
	d.done.Store(done)
	return d
}

// Done is the number of the last write known to be on disk.
func (d *Durable) Done() uint64 { return d.done.Load() }

// Synced records that write n, and so every write before it, is on disk.
func (d *Durable) Synced(n uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if n > d.done.Load() && !d.stopped {
		d.done.Store(n)
		close(d.changed)
		d.changed = make(chan struct{})
	}
}

// Stop wakes every waiter for good: the engine failed, and what it has not
// synced yet never will be.
func (d *Durable) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped {
		d.stopped = true
		close(d.changed)
	}
}

// Wait returns once every write up to n is on disk, with ErrUnavailable if
// the engine failed first, or ctx's error.
func (d *Durable) Wait(ctx context.Context, n uint64) error {
	if d.done.Load() >= n {
		return nil
	}
	for {
		// The count and the channel are read together, under the lock
		// Synced holds while it moves one and replaces the other: a count
		// read before a sync with the channel of after it would wait for
		// the next sync, which may never come.
		d.mu.Lock()
		done, stopped, changed := d.done.Load(), d.stopped, d.changed
		d.mu.Unlock()
		if done >= n {
			return nil
		}
		if stopped {
			return fmt.Errorf("%w: the store stopped before the writes this answer depends on were on disk", ErrUnavailable)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
