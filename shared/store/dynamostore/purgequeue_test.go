package dynamostore

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func queuedKeys(pks ...string) []purgeKey {
	var keys []purgeKey
	for i, pk := range pks {
		keys = append(keys, purgeKey{key: keyItem(pk, string(rune('a'+i))), shard: i % orderShards})
	}
	return keys
}

func pksOf(batch []purgeKey) []string {
	var pks []string
	for _, k := range batch {
		pks = append(pks, stringAttr(k.key, attrPartitionKey))
	}
	return pks
}

// TestPurgeQueueTakesPartitionsInTurn: a batch takes one key of each
// waiting PartitionKey before a second of any, whatever order the readers
// found them in, so a partition with many rows does not fill the batches.
func TestPurgeQueueTakesPartitionsInTurn(t *testing.T) {
	q := newPurgeQueue(100, 1)
	q.put(queuedKeys("p1", "p1", "p1", "p1"))
	q.put(queuedKeys("p2", "p2", "p3"))
	q.readerDone()
	var got [][]string
	for batch := q.take(3); batch != nil; batch = q.take(3) {
		got = append(got, pksOf(batch))
	}
	want := [][]string{{"p1", "p2", "p3"}, {"p1", "p2", "p1"}, {"p1"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v, want %v", got, want)
	}
}

// TestPurgeQueueRun: readers put what they find, deleters take it all;
// a full queue holds readers back; a failing deleter stops everyone and
// its error comes back.
func TestPurgeQueueRun(t *testing.T) {
	q := newPurgeQueue(2, 3)
	read := func(ctx context.Context, shard int) error {
		for range 5 {
			if !q.put(queuedKeys("p", "q")) {
				return ctx.Err()
			}
		}
		return nil
	}
	var taken int
	del := func(ctx context.Context, batch []purgeKey) error { taken += len(batch); return nil }
	n, err := q.run(context.Background(), 3, 1, read, del)
	if err != nil || n != 30 || taken != 30 {
		t.Errorf("run = %d, %v (deleters saw %d); want the readers' 30 keys", n, err, taken)
	}

	q = newPurgeQueue(2, 3)
	boom := errors.New("boom")
	n, err = q.run(context.Background(), 3, 2, read, func(context.Context, []purgeKey) error { return boom })
	if !errors.Is(err, boom) || n != 0 {
		t.Errorf("run with a failing deleter = %d, %v; want boom", n, err)
	}
}
