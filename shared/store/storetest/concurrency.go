package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// writers is how many goroutines race in the concurrency tests, the client
// count the performance targets assume.
const writers = 16

func (s suite) testConcurrency(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()

	t.Run("ConditionalReplaceRace", func(t *testing.T) {
		// Each round, every writer reads the same version and then all try
		// to replace it on its Timestamp: exactly one may win, and the
		// losers must see ErrConditionFailed.
		const rounds = 8
		f.insert(table, newEntity("race", "e", props{"Counter": edm.NewInt64(0)}))
		for round := range rounds {
			var read, done sync.WaitGroup
			start := make(chan struct{})
			var wins, conflicts atomic.Int32
			errs := make(chan error, writers)
			read.Add(writers)
			done.Add(writers)
			for w := range writers {
				go func() {
					defer done.Done()
					cur, err := f.get(table, "race", "e")
					read.Done()
					if err != nil {
						errs <- err
						return
					}
					<-start
					next := newEntity("race", "e", props{
						"Counter": edm.NewInt64(cur.Properties["Counter"].Int + 1),
						"Writer":  edm.NewInt32(int32(w)),
					})
					err = f.write(table, store.Op{Kind: store.OpReplace, Entity: next, Cond: store.CondTimestamp, Timestamp: cur.Timestamp})
					var opErr *store.OpError
					switch {
					case err == nil:
						wins.Add(1)
					case errors.Is(err, store.ErrConditionFailed) && errors.As(err, &opErr) && opErr.Index == 0:
						conflicts.Add(1)
					default:
						errs <- fmt.Errorf("writer %d: %w", w, err)
					}
				}()
			}
			read.Wait()
			close(start)
			done.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("round %d: %v", round, err)
			}
			if wins.Load() != 1 || conflicts.Load() != writers-1 {
				t.Fatalf("round %d: %d winners and %d conflicts; want 1 and %d", round, wins.Load(), conflicts.Load(), writers-1)
			}
		}
		if got := f.mustGet(table, "race", "e").Properties["Counter"].Int; got != rounds {
			t.Errorf("Counter = %d after %d rounds; an update was lost", got, rounds)
		}
	})

	t.Run("OptimisticIncrements", func(t *testing.T) {
		// Free-running read-modify-write loops that retry on conflict: the
		// final count proves no acknowledged update was lost.
		const perWriter = 5
		f.insert(table, newEntity("incr", "e", props{"Counter": edm.NewInt64(0)}))
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for done, attempts := 0, 0; done < perWriter; attempts++ {
					if attempts > 100*writers*perWriter {
						errs <- fmt.Errorf("writer %d: no progress after %d attempts", w, attempts)
						return
					}
					cur, err := f.get(table, "incr", "e")
					if err != nil {
						errs <- err
						return
					}
					patch := newEntity("incr", "e", props{"Counter": edm.NewInt64(cur.Properties["Counter"].Int + 1)})
					err = f.write(table, store.Op{Kind: store.OpMerge, Entity: patch, Cond: store.CondTimestamp, Timestamp: cur.Timestamp})
					switch {
					case err == nil:
						done++
					case !errors.Is(err, store.ErrConditionFailed):
						errs <- fmt.Errorf("writer %d: %w", w, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got := f.mustGet(table, "incr", "e").Properties["Counter"].Int; got != writers*perWriter {
			t.Errorf("Counter = %d; want %d", got, writers*perWriter)
		}
	})

	t.Run("ParallelInserts", func(t *testing.T) {
		const perWriter = 30
		var wg sync.WaitGroup
		errs := make(chan error, writers*perWriter)
		want := make([]*model.Entity, writers*perWriter)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWriter {
					// Half the writers share a partition, half have their own.
					pk := fmt.Sprintf("w%02d", w)
					if w%2 == 0 {
						pk = "shared"
					}
					e := newEntity(pk, fmt.Sprintf("w%02d-%03d", w, i), props{"W": edm.NewInt32(int32(w)), "I": edm.NewInt32(int32(i))})
					want[w*perWriter+i] = e
					if err := f.write(table, store.Op{Kind: store.OpInsert, Entity: e}); err != nil {
						errs <- fmt.Errorf("writer %d insert %d: %w", w, i, err)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		sortEntities(want)
		var got []*model.Entity
		for _, e := range f.queryAll(table, store.Query{Top: 1000}) {
			if e.PartitionKey != "race" && e.PartitionKey != "incr" {
				got = append(got, e)
			}
		}
		f.wantEntities(got, want, f.opts.unorderedPartitions)
	})

	t.Run("ReadsDuringWrites", func(t *testing.T) {
		// Readers never see a multi-op write in part: both entities of a
		// pair always carry the same generation.
		const generations = 30
		f.mustWrite(table,
			store.Op{Kind: store.OpInsert, Entity: newEntity("pair", "a", props{"Gen": edm.NewInt32(0)})},
			store.Op{Kind: store.OpInsert, Entity: newEntity("pair", "b", props{"Gen": edm.NewInt32(0)})},
		)
		stop := make(chan struct{})
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for r := range writers / 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					page, err := f.s.QueryEntities(f.ctx, f.account, table, store.Query{Keys: pkExact("pair"), Match: pkIs("pair"), Top: 2})
					if err != nil {
						errs <- fmt.Errorf("reader %d: %w", r, err)
						return
					}
					if len(page.Entities) == 2 && page.Entities[0].Properties["Gen"].Int != page.Entities[1].Properties["Gen"].Int {
						errs <- fmt.Errorf("reader %d saw generations %d and %d together", r,
							page.Entities[0].Properties["Gen"].Int, page.Entities[1].Properties["Gen"].Int)
						return
					}
				}
			}()
		}
		for g := 1; g <= generations; g++ {
			f.mustWrite(table,
				store.Op{Kind: store.OpReplace, Entity: newEntity("pair", "a", props{"Gen": edm.NewInt32(int32(g))})},
				store.Op{Kind: store.OpReplace, Entity: newEntity("pair", "b", props{"Gen": edm.NewInt32(int32(g))})},
			)
		}
		close(stop)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
