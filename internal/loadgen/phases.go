package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// insertKeys sets w.pk and w.rk to the keys of the worker's i-th insert:
// partitions of PartitionSize rows per worker.
func (w *worker) insertKeys(worker int, i int64) {
	w.pk = appendPartitionKey(w.pk[:0], kindInsert, worker, i/int64(w.r.cfg.PartitionSize))
	w.rk = appendRowKey(w.rk[:0], i)
}

// insertOne inserts the worker's next new entity.
func (w *worker) insertOne(ctx context.Context) (int64, error) {
	i := w.next
	w.next++
	w.insertKeys(w.id, i)
	if err := w.r.target.insert(ctx, w); err != nil {
		return 0, err
	}
	w.insertedIdx = append(w.insertedIdx, i)
	return 1, nil
}

// collectInserted gathers the keys the insert workers wrote.
func (r *run) collectInserted(workers []*worker) {
	for _, w := range workers {
		for _, i := range w.insertedIdx {
			r.inserted = append(r.inserted, insertedKey{worker: int32(w.id), index: i})
		}
		w.insertedIdx = nil
	}
}

// getOne reads one random existing entity: one the insert phase wrote, or
// one of the seed data set when that phase did not run.
func (w *worker) getOne(ctx context.Context) (int64, error) {
	if n := len(w.r.inserted); n > 0 {
		k := w.r.inserted[w.rng.IntN(n)]
		w.insertKeys(int(k.worker), k.index)
	} else {
		partition := int64(w.rng.IntN(w.r.cfg.QueryPartitions))
		w.pk = appendPartitionKey(w.pk[:0], kindSeed, -1, partition)
		w.rk = appendRowKey(w.rk[:0], int64(w.rng.IntN(w.r.cfg.PartitionSize)))
	}
	if err := w.r.target.get(ctx, w); err != nil {
		return 0, err
	}
	return 1, nil
}

// scanPartition reads one whole random seed partition. The partition's row
// count is known, so a short or long scan is an error.
func (w *worker) scanPartition(ctx context.Context) (int64, error) {
	partition := int64(w.rng.IntN(w.r.cfg.QueryPartitions))
	w.pk = appendPartitionKey(w.pk[:0], kindSeed, -1, partition)
	want := int64(w.r.cfg.PartitionSize)
	rows, err := w.r.target.scan(ctx, w, want)
	if err != nil {
		return 0, err
	}
	if rows != want {
		return 0, fmt.Errorf("query: partition scan returned %d rows, want %d", rows, want)
	}
	return rows, nil
}

// batchOne writes BatchSize new entities into one partition in a single
// entity group transaction.
func (w *worker) batchOne(ctx context.Context) (int64, error) {
	n := w.next
	w.next++
	size := int64(w.r.cfg.BatchSize)
	// Whole batches per partition, so a batch never straddles two.
	perPartition := max(1, int64(w.r.cfg.PartitionSize)/size)
	pk := appendPartitionKey(nil, kindBatch, w.id, n/perPartition)
	if err := w.r.target.writeBatch(ctx, w, pk, (n%perPartition)*size, size); err != nil {
		return 0, err
	}
	return size, nil
}

// ensureSeed loads the seed data set once: QueryPartitions partitions of
// PartitionSize rows, written with batches by all clients at once. Loading
// is setup, not measurement, and its duration is reported separately.
func (r *run) ensureSeed(ctx context.Context) (time.Duration, error) {
	if r.seeded {
		return 0, nil
	}
	start := time.Now()
	size := int64(r.cfg.BatchSize)
	chunks := (int64(r.cfg.PartitionSize) + size - 1) / size
	total := int64(r.cfg.QueryPartitions) * chunks
	fmt.Fprintf(r.progress, "bench: loading seed data: %d partitions x %d rows (%d batches)\n",
		r.cfg.QueryPartitions, r.cfg.PartitionSize, total)
	var (
		next     atomic.Int64
		failed   atomic.Bool
		errOnce  sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	for i := range min(int64(r.cfg.Clients), total) {
		w := r.newWorker(int(i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() && ctx.Err() == nil {
				job := next.Add(1) - 1
				if job >= total {
					return
				}
				partition, chunk := job/chunks, job%chunks
				first := chunk * size
				count := min(size, int64(r.cfg.PartitionSize)-first)
				pk := appendPartitionKey(nil, kindSeed, -1, partition)
				if err := w.r.target.writeBatch(ctx, w, pk, first, count); err != nil {
					errOnce.Do(func() { firstErr = err })
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		var se *statusError
		if !errors.As(firstErr, &se) {
			firstErr = errors.New(classify(firstErr))
		}
		return elapsed, firstErr
	}
	if err := ctx.Err(); err != nil {
		return elapsed, err
	}
	r.seeded = true
	return elapsed, nil
}
