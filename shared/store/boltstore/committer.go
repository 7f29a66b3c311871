package boltstore

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tablebridge/tablebridge/shared/store"
)

// committer group-commits writes. One goroutine runs a bbolt read-write
// transaction for every write that queued while the previous transaction
// was committing, so one commit (two fsyncs) covers all of them. Unlike
// bbolt's DB.Batch it waits on no timer: a batch is whatever arrived during
// the last commit, which keeps both latency and the number of fsyncs low.
// Measured with 16 clients through the local server on a 2-core machine
// (fsync 0.1-0.7 ms depending on the moment, two per commit): DB.Batch with
// its 1 ms timer reached about 5,200 durable inserts/s, this committer
// without the linger below 6,100-6,900, and with it 6,500-9,000 (mean about
// 7,800).
type committer struct {
	db      *bolt.DB
	durable *store.Durable
	maxSize int
	queue   chan *commitRequest
	stopped chan struct{}
	// onCommit, when set, learns each group's size and commit time
	// (WithCommitObserver).
	onCommit func(writes int, took time.Duration)
}

type commitRequest struct {
	// fn applies one Write inside the shared transaction. It returns an
	// error only for a bbolt failure; a failed condition is reported through
	// the caller's own variable, so it never rolls back the others. It may
	// run more than once and must be idempotent.
	fn   func(*bolt.Tx) error
	done chan error
	// state moves once from pending to claimed (the committer is about to
	// run fn) or to abandoned (the caller's context ended first); whoever
	// moves it decides whether the write can still happen.
	state atomic.Int32
}

const (
	pending int32 = iota
	claimed
	abandoned
)

// claim reports whether r's write may run: false when its caller gave up
// before the committer reached it, so it never touches the file.
func (r *commitRequest) claim() bool { return r.state.CompareAndSwap(pending, claimed) }

// errPanicked is what a write whose function panicked returns. The panic is
// recovered in the committer goroutine, which would otherwise take the whole
// process (every other request of the server) down with it: only that write
// fails and the rest of its group commits, as bbolt's DB.Batch does by
// re-running the failing function alone. The stack is kept for the log of
// the internal error the caller answers.
type errPanicked struct {
	value any
	stack []byte
}

func (e *errPanicked) Error() string {
	return fmt.Sprintf("boltstore: write panicked: %v\n%s", e.value, e.stack)
}

func newCommitter(db *bolt.DB, durable *store.Durable, maxSize int, onCommit func(int, time.Duration)) *committer {
	c := &committer{
		db:       db,
		durable:  durable,
		maxSize:  maxSize,
		queue:    make(chan *commitRequest, maxSize),
		stopped:  make(chan struct{}),
		onCommit: onCommit,
	}
	go c.run()
	return c
}

// do runs fn in the next group commit and returns once that commit is on
// disk (or failed). It honours ctx as far as it can without lying: while
// the write waits for a place in the queue or for the committer to reach
// it, ctx ending abandons it and do returns ctx's error, the write surely
// not applied. Once the committer has claimed it, do waits for the commit
// (at most one commit's fsyncs), because an answer before that could say
// "not done" for a write that is on disk a moment later.
func (c *committer) do(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &commitRequest{fn: fn, done: make(chan error, 1)}
	select {
	case c.queue <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-ctx.Done():
		if r.state.CompareAndSwap(pending, abandoned) {
			return ctx.Err()
		}
		return <-r.done
	}
}

// close stops the committer after the writes already queued. The store's
// lock guarantees no do is in flight or starts after it.
func (c *committer) close() {
	close(c.queue)
	<-c.stopped
}

func (c *committer) run() {
	defer close(c.stopped)
	group := make([]*commitRequest, 0, c.maxSize)
	var lastSize int
	var lastCommit time.Duration
	for first := range c.queue {
		group = append(group[:0], first)
		c.gather(&group, lastSize, lastCommit)
		start := time.Now()
		c.commit(group)
		// Writers active now: those just committed, who will be back,
		// and those who queued meanwhile.
		lastSize, lastCommit = len(group)+len(c.queue), time.Since(start)
		if c.onCommit != nil {
			c.onCommit(len(group), lastCommit)
		}
	}
}

// gather adds what is queued to the group. Writers acknowledged by the last
// commit need a moment to send their next write; while fewer writes are
// queued than writers were active at the last commit, it lingers for them,
// at most three quarters of a commit, so steady writers share one commit
// instead of alternating between two half-full ones. (Half a commit measured
// a little lower, a whole one no better; the machine's fsync latency varied
// too much between runs to tell finer.)
func (c *committer) gather(group *[]*commitRequest, lastSize int, lastCommit time.Duration) {
	var deadline <-chan time.Time
	for len(*group) < c.maxSize {
		select {
		case r, ok := <-c.queue:
			if !ok {
				return
			}
			*group = append(*group, r)
			continue
		default:
		}
		if len(*group) >= lastSize || lastCommit <= 0 {
			return
		}
		if deadline == nil {
			t := time.NewTimer(lastCommit * 3 / 4)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case r, ok := <-c.queue:
			if !ok {
				return
			}
			*group = append(*group, r)
		case <-deadline:
			return
		}
	}
}

// commit runs the group in one transaction. When one function fails with a
// bbolt error, the shared transaction rolls back: that function gets its
// error and the rest are committed again without it, as DB.Batch does.
func (c *committer) commit(group []*commitRequest) {
	// Writes whose callers gave up are dropped before anything runs.
	claimedOnly := group[:0]
	for _, r := range group {
		if r.claim() {
			claimedOnly = append(claimedOnly, r)
		}
	}
	group = claimedOnly
	for len(group) > 0 {
		failed := -1
		err := updateSynced(c.db, c.durable, func(tx *bolt.Tx) error {
			for i, r := range group {
				if err := runWrite(r.fn, tx); err != nil {
					failed = i
					return err
				}
			}
			return nil
		})
		if err == nil {
			for _, r := range group {
				r.done <- nil
			}
			return
		}
		if failed < 0 {
			// The commit itself failed (a write or fsync error). bbolt
			// writes the meta page before its fdatasync and keeps reading
			// it after a failed sync, so the group may be applied, and on
			// disk after the next commit: its outcome is unknown.
			err = fmt.Errorf("%w: boltstore: commit: %v", store.ErrOutcomeUnknown, err)
			for _, r := range group {
				r.done <- err
			}
			return
		}
		group[failed].done <- err
		group = append(group[:failed:failed], group[failed+1:]...)
	}
}

// runWrite runs one write's function, turning a panic into errPanicked so
// that the shared transaction rolls back and only that write fails.
func runWrite(fn func(*bolt.Tx) error, tx *bolt.Tx) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &errPanicked{value: v, stack: debug.Stack()}
		}
	}()
	return fn(tx)
}
