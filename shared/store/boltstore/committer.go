package boltstore

import (
	"time"

	bolt "go.etcd.io/bbolt"
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
}

func newCommitter(db *bolt.DB, maxSize int, onCommit func(int, time.Duration)) *committer {
	c := &committer{
		db:       db,
		maxSize:  maxSize,
		queue:    make(chan *commitRequest, maxSize),
		stopped:  make(chan struct{}),
		onCommit: onCommit,
	}
	go c.run()
	return c
}

// do runs fn in the next group commit and returns once that commit is on
// disk (or failed).
func (c *committer) do(fn func(*bolt.Tx) error) error {
	r := &commitRequest{fn: fn, done: make(chan error, 1)}
	c.queue <- r
	return <-r.done
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
	for len(group) > 0 {
		failed := -1
		err := c.db.Update(func(tx *bolt.Tx) error {
			for i, r := range group {
				if err := r.fn(tx); err != nil {
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
			// The commit itself failed (a write or fsync error): nothing of
			// the group is durable.
			for _, r := range group {
				r.done <- err
			}
			return
		}
		group[failed].done <- err
		group = append(group[:failed:failed], group[failed+1:]...)
	}
}
