package boltstore

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tablebridge/tablebridge/shared/store"
)

func openRawBolt(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "raw.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("b")); return err }); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestCommitterIsolatesFailures: a function that fails rolls back only
// itself; every other write of its group commits and is acknowledged.
func TestCommitterIsolatesFailures(t *testing.T) {
	t.Parallel()
	db := openRawBolt(t)
	c := newCommitter(db, store.NewDurable(0), 64, nil)
	boom := errors.New("boom")
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		calls = map[int]int{}
		errs  = make([]error, 40)
	)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.do(context.Background(), func(tx *bolt.Tx) error {
				mu.Lock()
				calls[i]++
				mu.Unlock()
				if err := tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "k%02d", i), []byte("v")); err != nil {
					return err
				}
				if i%10 == 3 {
					return boom
				}
				return nil
			})
		}()
	}
	wg.Wait()
	c.close()
	for i, err := range errs {
		if want := i%10 == 3; (err != nil) != want || (want && !errors.Is(err, boom)) {
			t.Errorf("write %d: err %v", i, err)
		}
	}
	err := db.View(func(tx *bolt.Tx) error {
		for i := range errs {
			got := tx.Bucket([]byte("b")).Get(fmt.Appendf(nil, "k%02d", i)) != nil
			if want := i%10 != 3; got != want {
				t.Errorf("key %d stored = %v, want %v", i, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommitterGroupsConcurrentWrites: writers that queue while a commit is
// under way share the next one, so commits are fewer than writes.
func TestCommitterGroupsConcurrentWrites(t *testing.T) {
	t.Parallel()
	db := openRawBolt(t)
	c := newCommitter(db, store.NewDurable(0), 256, nil)
	defer c.close()
	const writers, each = 16, 20
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		txs = map[int]bool{}
	)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := c.do(context.Background(), func(tx *bolt.Tx) error {
					mu.Lock()
					txs[tx.ID()] = true
					mu.Unlock()
					return tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "w%02d-%03d", w, i), []byte("v"))
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	commits := len(txs)
	if commits >= writers*each {
		t.Fatalf("%d commits for %d writes: nothing was grouped", commits, writers*each)
	}
	t.Logf("%d writes in %d commits", writers*each, commits)
}

// TestCommitterRecoversPanic: a write whose function panics fails alone,
// with errPanicked, and the process survives; the other writes of its
// group commit, as bbolt's DB.Batch re-runs a failing function alone.
func TestCommitterRecoversPanic(t *testing.T) {
	t.Parallel()
	db := openRawBolt(t)
	c := newCommitter(db, store.NewDurable(0), 64, nil)
	defer c.close()
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.do(context.Background(), func(tx *bolt.Tx) error {
				if err := tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "k%02d", i), []byte("v")); err != nil {
					return err
				}
				if i == 7 {
					panic("write 7 is broken")
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		var p *errPanicked
		if i == 7 {
			if !errors.As(err, &p) || p.value != "write 7 is broken" || len(p.stack) == 0 {
				t.Errorf("write 7: err %v, want errPanicked with its value and stack", err)
			}
			continue
		}
		if err != nil {
			t.Errorf("write %d: %v", i, err)
		}
	}
	// The committer still runs after the panic.
	if err := c.do(context.Background(), func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte("after"), []byte("v")) }); err != nil {
		t.Fatalf("write after the panic: %v", err)
	}
	err := db.View(func(tx *bolt.Tx) error {
		for i := range errs {
			if got, want := tx.Bucket([]byte("b")).Get(fmt.Appendf(nil, "k%02d", i)) != nil, i != 7; got != want {
				t.Errorf("key %d stored = %v, want %v", i, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommitterHonoursContext: a write whose context ends while it waits
// for the committer is abandoned, returns the context's error and never
// touches the file; a write the committer already runs is waited for, so
// its answer is never "not done" for a write on disk.
func TestCommitterHonoursContext(t *testing.T) {
	t.Parallel()
	db := openRawBolt(t)
	c := newCommitter(db, store.NewDurable(0), 64, nil)
	defer c.close()
	put := func(key string) func(*bolt.Tx) error {
		return func(tx *bolt.Tx) error { return tx.Bucket([]byte("b")).Put([]byte(key), []byte("v")) }
	}

	t.Run("done before queued", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := c.do(ctx, put("never")); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})

	t.Run("done while waiting", func(t *testing.T) {
		// The first write holds the committer inside its transaction until
		// the second has been abandoned.
		entered, release := make(chan struct{}), make(chan struct{})
		firstDone := make(chan error, 1)
		go func() {
			firstDone <- c.do(context.Background(), func(tx *bolt.Tx) error {
				select {
				case <-entered:
				default:
					close(entered)
				}
				<-release
				return put("first")(tx)
			})
		}()
		<-entered
		ctx, cancel := context.WithCancel(context.Background())
		secondDone := make(chan error, 1)
		go func() { secondDone <- c.do(ctx, put("abandoned")) }()
		cancel()
		if err := <-secondDone; !errors.Is(err, context.Canceled) {
			t.Errorf("abandoned write: err %v, want context.Canceled", err)
		}
		close(release)
		if err := <-firstDone; err != nil {
			t.Fatalf("first write: %v", err)
		}
		// A later write commits: the abandoned one was skipped, not lost
		// in the queue.
		if err := c.do(context.Background(), put("later")); err != nil {
			t.Fatal(err)
		}
		err := db.View(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("b"))
			if b.Get([]byte("abandoned")) != nil || b.Get([]byte("never")) != nil {
				t.Error("an abandoned write reached the file")
			}
			if b.Get([]byte("first")) == nil || b.Get([]byte("later")) == nil {
				t.Error("a committed write is missing")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("done while running", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		err := c.do(ctx, func(tx *bolt.Tx) error {
			cancel() // the caller gives up while its write runs
			return put("running")(tx)
		})
		if err != nil {
			t.Fatalf("err %v: a claimed write must report its commit", err)
		}
		if err := db.View(func(tx *bolt.Tx) error {
			if tx.Bucket([]byte("b")).Get([]byte("running")) == nil {
				t.Error("the claimed write is not on disk")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCommitterObserver: the observer learns every group commit, and the
// group sizes add up to the writes acknowledged.
func TestCommitterObserver(t *testing.T) {
	t.Parallel()
	db := openRawBolt(t)
	var commits, writes int // only the committer's goroutine writes them
	c := newCommitter(db, store.NewDurable(0), 8, func(n int, took time.Duration) {
		if n < 1 || n > 8 || took <= 0 {
			t.Errorf("group of %d writes in %v", n, took)
		}
		commits++
		writes += n
	})
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.do(context.Background(), func(tx *bolt.Tx) error {
				return tx.Bucket([]byte("b")).Put(fmt.Appendf(nil, "k%02d", i), []byte("v"))
			}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	c.close() // waits for the committer's goroutine: its counts are final
	if writes != 40 || commits < 5 || commits > 40 {
		t.Errorf("%d writes in %d commits, want 40 in 5 to 40", writes, commits)
	}
}

// TestFailedCommitIsOutcomeUnknown: when the commit itself fails (here bbolt
// refuses any read-write transaction of a file opened read-only), every
// write of the group is answered store.ErrOutcomeUnknown: a commit whose
// fdatasync failed may still be applied, so no write of it may be told it
// failed.
func TestFailedCommitIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "ro.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := newCommitter(db, store.NewDurable(0), 8, nil)
	defer c.close()
	err = c.do(context.Background(), func(tx *bolt.Tx) error { return nil })
	if !errors.Is(err, store.ErrOutcomeUnknown) {
		t.Fatalf("a write whose commit failed: %v; want store.ErrOutcomeUnknown", err)
	}
}
