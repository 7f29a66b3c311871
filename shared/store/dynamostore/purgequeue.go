package dynamostore

import (
	"context"
	"sync"
)

// purgeQueue holds the keys a table's shard readers found and its deleters
// have not yet deleted, by stored PartitionKey. The order index gives each
// shard's items in key order, so the readers of the 20 shards all walk the
// PartitionKeys in the same order and would, deleting as they read, reach
// each PartitionKey together: a partition with many rows would take all
// of them at once and, held to its key's rate, make them all wait. Through
// the queue, readers run ahead up to its bound and deleters fill each batch
// from the PartitionKeys waiting, in turn, so a batch holds a little of
// many partitions and the purge goes as fast as many keys' rates allow.
type purgeQueue struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int
	// byPK holds each PartitionKey's waiting keys; order lists the
	// PartitionKeys with waiting keys, the next to take from first.
	byPK    map[string][]purgeKey
	order   []string
	waiting int
	readers int // readers that have not finished
	stopped bool
}

// purgeKey is one item to delete, with the order index shard it is in.
type purgeKey struct {
	key   item
	shard int
}

func newPurgeQueue(max, readers int) *purgeQueue {
	q := &purgeQueue{max: max, byPK: map[string][]purgeKey{}, readers: readers}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// put adds keys, waiting while the queue is full; false once it stopped.
func (q *purgeQueue) put(keys []purgeKey) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.waiting >= q.max && !q.stopped {
		q.cond.Wait()
	}
	if q.stopped {
		return false
	}
	for _, k := range keys {
		pk := stringAttr(k.key, attrPartitionKey)
		if len(q.byPK[pk]) == 0 {
			q.order = append(q.order, pk)
		}
		q.byPK[pk] = append(q.byPK[pk], k)
	}
	q.waiting += len(keys)
	q.cond.Broadcast()
	return true
}

// readerDone says one reader has put all it will.
func (q *purgeQueue) readerDone() {
	q.mu.Lock()
	q.readers--
	q.cond.Broadcast()
	q.mu.Unlock()
}

// stop ends the queue: put and take return at once.
func (q *purgeQueue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

// take returns up to n keys, one from each waiting PartitionKey in turn
// (then a second from each, and so on), waiting while the queue is empty
// and a reader may still put; nil when there is nothing more.
func (q *purgeQueue) take(n int) []purgeKey {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.waiting == 0 && q.readers > 0 && !q.stopped {
		q.cond.Wait()
	}
	if q.stopped {
		return nil
	}
	var batch []purgeKey
	for len(batch) < n && q.waiting > 0 {
		pk := q.order[0]
		keys := q.byPK[pk]
		batch = append(batch, keys[0])
		q.waiting--
		q.order = q.order[1:]
		if len(keys) == 1 {
			delete(q.byPK, pk)
		} else {
			q.byPK[pk] = keys[1:]
			q.order = append(q.order, pk)
		}
	}
	q.cond.Broadcast()
	return batch
}

// run feeds the queue with readers, one per shard, and empties it with
// deleters, until both are done or one fails; it returns how many keys the
// deleters deleted.
func (q *purgeQueue) run(ctx context.Context, shards, deleters int, read func(ctx context.Context, shard int) error, del func(ctx context.Context, batch []purgeKey) error) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel()
		q.stop()
	}
	context.AfterFunc(ctx, q.stop)
	for shard := range shards {
		wg.Go(func() {
			defer q.readerDone()
			if err := read(ctx, shard); err != nil {
				fail(err)
			}
		})
	}
	deleted := 0
	for range deleters {
		wg.Go(func() {
			for {
				batch := q.take(batchWriteMax)
				if batch == nil {
					return
				}
				if err := del(ctx, batch); err != nil {
					fail(err)
					return
				}
				mu.Lock()
				deleted += len(batch)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return deleted, first
}
