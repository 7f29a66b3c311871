package dynamostore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// queuedKeys are keys of PartitionKey and shard pairs: "p1/0".
func queuedKeys(pairs ...string) []purgeKey {
	var keys []purgeKey
	for i, pair := range pairs {
		pk, shard, _ := strings.Cut(pair, "/")
		n, _ := strconv.Atoi(shard)
		keys = append(keys, purgeKey{key: keyItem(pk, strconv.Itoa(i)), shard: n})
	}
	return keys
}

func pksOf(batch []purgeKey) []string {
	var pks []string
	for _, k := range batch {
		pks = append(pks, stringAttr(k.key, attrPartitionKey)+"/"+strconv.Itoa(k.shard))
	}
	return pks
}

// TestPurgeQueueTakesPartitionsInTurn: a batch takes one key of each
// waiting PartitionKey before a second of any, whatever order the readers
// found them in, so a partition with many rows does not fill the batches;
// and at most one key of each index shard, so no key of the batch waits
// longer than one item's turn; a PartitionKey passed over for its shard
// keeps its turn.
func TestPurgeQueueTakesPartitionsInTurn(t *testing.T) {
	q := newPurgeQueue(100, 1)
	q.put(queuedKeys("p1/0", "p1/1", "p1/2", "p1/3"))
	q.put(queuedKeys("p2/0", "p2/4", "p3/5"))
	q.readerDone()
	var got [][]string
	for batch := q.take(3); batch != nil; batch = q.take(3) {
		got = append(got, pksOf(batch))
	}
	want := [][]string{{"p1/0", "p3/5"}, {"p2/0", "p1/1"}, {"p2/4", "p1/2"}, {"p1/3"}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("batches %v, want %v", got, want)
	}
}

// TestPurgeQueueRun: readers put what they find, deleters take it all; a
// failing deleter stops everyone and its error comes back.
func TestPurgeQueueRun(t *testing.T) {
	q := newPurgeQueue(2, 3)
	read := func(ctx context.Context, shard int) error {
		for range 5 {
			if !q.put(queuedKeys("p/"+strconv.Itoa(shard), "q/"+strconv.Itoa(shard+3))) {
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
