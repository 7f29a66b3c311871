package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// createTable creates the run's table (Create Table: POST /Tables).
func (w *worker) createTable(ctx context.Context) error {
	body := []byte(`{"TableName":"` + w.r.table + `"}`)
	resp, err := w.send(ctx, http.MethodPost, w.r.base+"/Tables", body, jsonContentType, func(h http.Header) {
		h["Prefer"] = returnNoContent
	})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		return newStatusError("create table", resp, w.resp.Bytes())
	}
	return nil
}

// deleteTable deletes the run's table (Delete Table: DELETE /Tables('t')).
func (w *worker) deleteTable(ctx context.Context) error {
	resp, err := w.send(ctx, http.MethodDelete, w.r.base+"/Tables('"+w.r.table+"')", nil, nil, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusNoContent {
		return newStatusError("delete table", resp, w.resp.Bytes())
	}
	return nil
}

// insertKeys sets w.pk and w.rk to the keys of the worker's i-th insert:
// partitions of PartitionSize rows per worker.
func (w *worker) insertKeys(worker int, i int64) {
	w.pk = appendPartitionKey(w.pk[:0], kindInsert, worker, i/int64(w.r.cfg.PartitionSize))
	w.rk = appendRowKey(w.rk[:0], i)
}

// insertOne inserts one new entity as aztables' AddEntity does: POST
// /<table> without Prefer, so the service answers 201 with the entity.
func (w *worker) insertOne(ctx context.Context) (int64, error) {
	i := w.next
	w.next++
	w.insertKeys(w.id, i)
	// A fresh body per request: net/http may still be reading a request
	// body after Do returns, so it must not be reused.
	body := w.r.template.appendEntity(make([]byte, 0, w.r.template.size), w.pk, w.rk)
	resp, err := w.send(ctx, http.MethodPost, w.r.tableURL, body, jsonContentType, nil)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusNoContent {
		return 0, newStatusError("insert", resp, w.resp.Bytes())
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

// getOne reads one random existing entity (Query Entities with both keys in
// the URL, as aztables' GetEntity sends it).
func (w *worker) getOne(ctx context.Context) (int64, error) {
	if n := len(w.r.inserted); n > 0 {
		k := w.r.inserted[w.rng.IntN(n)]
		w.insertKeys(int(k.worker), k.index)
	} else {
		partition := int64(w.rng.IntN(w.r.cfg.QueryPartitions))
		w.pk = appendPartitionKey(w.pk[:0], kindSeed, -1, partition)
		w.rk = appendRowKey(w.rk[:0], int64(w.rng.IntN(w.r.cfg.PartitionSize)))
	}
	u := make([]byte, 0, len(w.r.tableURL)+64)
	u = append(u, w.r.tableURL...)
	u = append(u, "(PartitionKey='"...)
	u = append(u, w.pk...)
	u = append(u, "',RowKey='"...)
	u = append(u, w.rk...)
	u = append(u, "')"...)
	resp, err := w.send(ctx, http.MethodGet, string(u), nil, nil, nil)
	if err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, newStatusError("get", resp, w.resp.Bytes())
	}
	// A cheap check that the entity asked for is the one that came back.
	want := append(append([]byte(`"RowKey":"`), w.rk...), '"')
	if !bytes.Contains(w.resp.Bytes(), want) {
		return 0, fmt.Errorf("get: response does not hold RowKey %s", w.rk)
	}
	return 1, nil
}

// scanPartition reads one whole seed partition with a PartitionKey filter,
// following the continuation headers until they stop, as aztables'
// ListEntities pager does. The partition's row count is known, so a short or
// long scan is an error.
func (w *worker) scanPartition(ctx context.Context) (int64, error) {
	partition := int64(w.rng.IntN(w.r.cfg.QueryPartitions))
	w.pk = appendPartitionKey(w.pk[:0], kindSeed, -1, partition)
	filter := "%24filter=" + escapeQueryValue("PartitionKey eq '"+string(w.pk)+"'")
	pageURL := w.r.tableURL + "()?" + filter
	want := int64(w.r.cfg.PartitionSize)
	// Azure may return short or even empty pages with a continuation; one
	// row per page is the worst case a correct server can produce.
	maxPages := want + 2
	var rows int64
	for page := int64(0); ; page++ {
		if page == maxPages {
			return 0, fmt.Errorf("query: partition %s still continuing after %d pages", w.pk, page)
		}
		resp, err := w.send(ctx, http.MethodGet, pageURL, nil, nil, nil)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, newStatusError("query", resp, w.resp.Bytes())
		}
		n, err := countValueRows(w.resp.Bytes())
		if err != nil {
			return 0, fmt.Errorf("query: %w", err)
		}
		rows += int64(n)
		nextPK := resp.Header.Get("x-ms-continuation-NextPartitionKey")
		if nextPK == "" {
			break
		}
		// url.Values.Encode order, as the SDK sends it: $filter,
		// NextPartitionKey, NextRowKey.
		pageURL = w.r.tableURL + "()?" + filter + "&NextPartitionKey=" + escapeQueryValue(nextPK)
		if nextRK := resp.Header.Get("x-ms-continuation-NextRowKey"); nextRK != "" {
			pageURL += "&NextRowKey=" + escapeQueryValue(nextRK)
		}
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
	if err := w.sendBatch(ctx, pk, (n%perPartition)*size, size); err != nil {
		return 0, err
	}
	return size, nil
}

// sendBatch inserts rows firstRow..firstRow+count-1 of partition pk in one
// $batch request and checks every operation's response.
func (w *worker) sendBatch(ctx context.Context, pk []byte, firstRow, count int64) error {
	bb := w.r.batch
	batchID, changesetID := newUUID(w.rng), newUUID(w.rng)
	body := make([]byte, 0, int(count)*(w.r.template.size+len(bb.requestLine)+200)+200)
	body = bb.begin(body, batchID, changesetID)
	for j := range count {
		w.rk = appendRowKey(w.rk[:0], firstRow+j)
		w.entity = w.r.template.appendEntity(w.entity[:0], pk, w.rk)
		body = bb.appendInsert(body, changesetID, j == 0, w.entity)
	}
	body = bb.end(body, batchID, changesetID)
	resp, err := w.send(ctx, http.MethodPost, w.r.batchURL, body, []string{batchContentType(batchID)}, nil)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return newStatusError("batch", resp, w.resp.Bytes())
	}
	return checkBatchResponse(w.resp.Bytes(), int(count))
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
				if err := w.sendBatch(ctx, pk, first, count); err != nil {
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
