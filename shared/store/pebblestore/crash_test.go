package pebblestore

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestCrashKeepsAcknowledgedWrites crashes the store under 16 writers, five
// times, on Pebble's crashable in-memory file system: each crash keeps what
// was synced and a random half of what was not, so the log ends in a torn
// tail (part of a block, or a block without the ones before it). Every
// write acknowledged before the crash is there after recovery, each write
// is all there or not at all (its batch of three entities), and the
// recovered store takes writes and opens again.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	mem := vfs.NewCrashableMem()
	s, err := Open("data", WithFS(mem), testMemory, WithLog(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CreateTable(ctx, "acct", "crash"); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		acked []string
		stop  = make(chan struct{})
		wg    sync.WaitGroup
	)
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				pk := fmt.Sprintf("w%02d-%06d", w, i)
				if err := s.Write(ctx, "acct", "crash", threeEntities(pk)); err != nil {
					t.Errorf("write %s: %v", pk, err)
					return
				}
				mu.Lock()
				acked = append(acked, pk)
				mu.Unlock()
			}
		}()
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for crash := range 5 {
		time.Sleep(time.Duration(20+rng.IntN(60)) * time.Millisecond)
		mu.Lock()
		before := slices.Clone(acked)
		mu.Unlock()
		clone := mem.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: 50, RNG: rand.New(rand.NewPCG(uint64(crash), 3))})
		checkRecovered(t, ctx, clone, "data", before)
	}
	close(stop)
	wg.Wait()
}

// threeEntities is one write of three entities of partition pk.
func threeEntities(pk string) []store.Op {
	ops := make([]store.Op, 3)
	for i := range ops {
		ops[i] = store.Op{Kind: store.OpInsert, Entity: entity(pk, fmt.Sprint(i), time.Unix(1, 0), map[string]edm.Value{"N": edm.NewInt32(int32(i))})}
	}
	return ops
}

// checkRecovered opens the crashed file system and finds every
// acknowledged write there, every write whole or absent, and a store that
// takes a write and opens again.
func checkRecovered(t *testing.T, ctx context.Context, fs vfs.FS, dir string, acked []string) {
	t.Helper()
	s, err := Open(dir, WithFS(fs), testMemory, WithLog(io.Discard))
	if err != nil {
		t.Fatalf("open after a crash: %v", err)
	}
	counts := map[string]int{}
	q := store.Query{Top: 1000}
	for {
		page, err := s.QueryEntities(ctx, "acct", "crash", q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			counts[e.PartitionKey]++
		}
		if page.Next == nil {
			break
		}
		q.After = page.Next
	}
	for _, pk := range acked {
		if counts[pk] != 3 {
			t.Fatalf("acknowledged write %s: %d of its 3 entities after the crash", pk, counts[pk])
		}
	}
	for pk, n := range counts {
		if n != 3 {
			t.Fatalf("write %s half there after the crash: %d of 3 entities", pk, n)
		}
	}
	if err := s.Write(ctx, "acct", "crash", threeEntities("after-crash")); err != nil {
		t.Fatalf("write after recovery: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(dir, WithFS(fs), testMemory, WithLog(io.Discard))
	if err != nil {
		t.Fatalf("second open after a crash: %v", err)
	}
	if _, err := s.GetEntity(ctx, "acct", "crash", "after-crash", "2"); err != nil {
		t.Errorf("the write after recovery: %v", err)
	}
	s.Close()
	t.Logf("recovered %d writes (%d acknowledged before the crash)", len(counts), len(acked))
}

// TestTornLogTailOnDisk damages the end of the newest log on a real
// directory as a crash during a write can leave it (a partial record, then
// garbage) and opens it again: every entity written before is there, and
// the store takes writes.
func TestTornLogTailOnDisk(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	for _, tail := range []struct {
		name   string
		damage func(log []byte) []byte
	}{
		{"PartialRecord", func(log []byte) []byte { return log[len(log)-40 : len(log)-17] }},
		{"Garbage", func([]byte) []byte { return []byte(strings.Repeat("\xa5\x17", 300)) }},
		{"Zeros", func([]byte) []byte { return make([]byte, 4096) }},
	} {
		t.Run(tail.name, func(t *testing.T) {
			t.Parallel()
			s, dir := openTemp(t)
			if _, err := s.CreateTable(ctx, "acct", "crash"); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				if err := s.Write(ctx, "acct", "crash", threeEntities(fmt.Sprintf("p%02d", i))); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
			if len(logs) == 0 {
				t.Fatal("no log in the directory")
			}
			slices.Sort(logs)
			newest := logs[len(logs)-1]
			b, err := os.ReadFile(newest)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(newest, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(tail.damage(b)); err != nil {
				t.Fatal(err)
			}
			f.Close()
			acked := make([]string, 20)
			for i := range acked {
				acked[i] = fmt.Sprintf("p%02d", i)
			}
			checkRecovered(t, ctx, vfs.Default, dir, acked)
		})
	}
}
