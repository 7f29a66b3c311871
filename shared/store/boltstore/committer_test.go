package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
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
	db := openRawBolt(t)
	c := newCommitter(db, 64, nil)
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
			errs[i] = c.do(func(tx *bolt.Tx) error {
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
	db := openRawBolt(t)
	c := newCommitter(db, 256, nil)
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
				err := c.do(func(tx *bolt.Tx) error {
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

// TestCommitterObserver: the observer learns every group commit, and the
// group sizes add up to the writes acknowledged.
func TestCommitterObserver(t *testing.T) {
	db := openRawBolt(t)
	var commits, writes int // only the committer's goroutine writes them
	c := newCommitter(db, 8, func(n int, took time.Duration) {
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
			if err := c.do(func(tx *bolt.Tx) error {
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
