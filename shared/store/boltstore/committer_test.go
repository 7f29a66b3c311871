package boltstore

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

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
	c := newCommitter(db, 64)
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
	c := newCommitter(db, 256)
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
