package dynamostore

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// Ordered reads. A query without a PartitionKey equality reads every shard
// of the order index with the query's key range (and cursor) as bounds on
// attrOrder, lazily, a few items per shard at a time, and merges the shards
// by key. Index reads are eventually consistent (DynamoDB offers nothing
// else on a global secondary index).

// errNoOrderIndex: the table has no usable order index (created unordered,
// or still backfilling it); the query falls back to a Scan.
var errNoOrderIndex = errors.New("dynamostore: table has no order index")

// noIndexRecheck is how long a table found without the index is Scanned
// before the index is tried again, so an index added to it meanwhile (by
// hand) is used without a restart.
const noIndexRecheck = time.Minute

func (s *Store) orderIndexUsable(phys string) bool {
	until, ok := s.noIndex.Load(phys)
	return !ok || time.Now().After(until.(time.Time))
}

func (s *Store) markNoIndex(phys string) {
	s.indexSeen.Delete(phys)
	s.noIndex.Store(phys, time.Now().Add(noIndexRecheck))
}

// orderIndexUnusable tells, after a Query of the order index failed with a
// ValidationException, whether the table lacks the index or is still
// building it (DynamoDB answers both with that code and only its message
// tells them apart: "The table does not have the specified index",
// "Cannot read from backfilling global secondary index"). It asks
// DescribeTable instead of reading the message, whose words are not part
// of DynamoDB's API: one request, only on this error path.
func (s *Store) orderIndexUnusable(ctx context.Context, phys string, err error) bool {
	if !hasUnmodeledCode(err, "ValidationException") {
		return false
	}
	desc, derr := s.describe(ctx, phys)
	if derr != nil {
		return false
	}
	gsi := orderIndexOf(desc)
	return gsi == nil || gsi.IndexStatus != types.IndexStatusActive || aws.ToBool(gsi.Backfilling)
}

// orderIndexOf is a table's order index, nil when it has none.
func orderIndexOf(desc *types.TableDescription) *types.GlobalSecondaryIndexDescription {
	for i, gsi := range desc.GlobalSecondaryIndexes {
		if aws.ToString(gsi.IndexName) == orderIndex {
			return &desc.GlobalSecondaryIndexes[i]
		}
	}
	return nil
}

// keyed is an item read from the index with its Azure keys.
type keyed struct {
	pi     pageItem
	pk, rk string // Azure keys, for the merge
	spk    string // stored keys, for the cursor
	srk    string
	// order is the index's attrOrder when the encoding reaches the
	// index's limit, nil when it is shorter and so cannot tie with a
	// truncated one.
	order  []byte
	capped bool // the encoding was truncated: it may tie with others
}

func compareKeyed(a, b *keyed) int {
	return cmp.Or(strings.Compare(a.pk, b.pk), strings.Compare(a.rk, b.rk))
}

func newKeyed(loc *location, pi pageItem) keyed {
	k := keyed{pi: pi}
	if pi.entity != nil {
		k.pk, k.rk = pi.entity.PartitionKey, pi.entity.RowKey
		k.spk, k.srk = loc.pk(k.pk), encodeKey(k.rk)
	} else {
		k.spk, k.srk = stringAttr(pi.it, attrPartitionKey), stringAttr(pi.it, attrRowKey)
		k.pk, k.rk = loc.unpk(k.spk), decodeKey(k.srk)
	}
	n := len(k.spk) + 1 + len(k.srk) // len(fullOrderKey(spk, srk))
	k.capped = n > maxOrderBytes
	if n >= maxOrderBytes {
		k.order = truncOrder(fullOrderKey(k.spk, k.srk))
	}
	return k
}

// shardStream is one shard of the index, read in pages.
type shardStream struct {
	// ready holds items in key order, to be merged. held holds the last
	// items read when they share a truncated encoding whose group may go
	// on in the next page: their order is known once the group ends.
	ready, held []keyed
	start       item // ExclusiveStartKey of the next page
	done        bool
	// values are the query's ExpressionAttributeValues with this shard's
	// number, built once.
	values map[string]types.AttributeValue
}

// merger merges the shards of one query.
type merger struct {
	s      *Store
	loc    *location
	cond   string
	names  map[string]string
	after  *store.Cursor
	shards []*shardStream
}

// orderedReader reads a query across partitions from the order index.
// empty reports that no key can match.
func (s *Store) orderedReader(loc *location, q store.Query) (reader, bool) {
	var after *cursorKeys
	if q.After != nil {
		after = &cursorKeys{pk: loc.pk(q.After.PartitionKey), rk: encodeKey(q.After.RowKey)}
	}
	lo, hi, empty := orderBounds(loc, q.Keys.PartitionKey, after)
	if empty {
		return nil, true
	}
	m := &merger{s: s, loc: loc, after: q.After, names: map[string]string{"#s": attrShard}}
	values := map[string]types.AttributeValue{}
	m.cond = "#s = :s"
	switch {
	case lo != nil && hi != nil:
		m.cond += " AND #o BETWEEN :lo AND :hi"
	case lo != nil:
		m.cond += " AND #o >= :lo"
	case hi != nil:
		m.cond += " AND #o <= :hi"
	}
	if lo != nil || hi != nil {
		m.names["#o"] = attrOrder
	}
	if lo != nil {
		values[":lo"] = &types.AttributeValueMemberB{Value: lo}
	}
	if hi != nil {
		values[":hi"] = &types.AttributeValueMemberB{Value: hi}
	}
	for i := range orderShards {
		shardValues := maps.Clone(values)
		shardValues[":s"] = loc.shardValue(i)
		m.shards = append(m.shards, &shardStream{values: shardValues})
	}
	return m.read, false
}

// read returns up to limit items in key order; last is nil once every
// shard is spent.
func (m *merger) read(ctx context.Context, limit int32, _ item) ([]pageItem, item, int, error) {
	out := make([]pageItem, 0, limit)
	var last *keyed
	scanned := 0
	for len(out) < int(limit) {
		n, err := m.fill(ctx, int(limit)-len(out))
		scanned += n
		if err != nil {
			return nil, nil, scanned, err
		}
		var next *shardStream
		for _, sh := range m.shards {
			if len(sh.ready) > 0 && (next == nil || compareKeyed(&sh.ready[0], &next.ready[0]) < 0) {
				next = sh
			}
		}
		if next == nil {
			return out, nil, scanned, nil
		}
		k := next.ready[0]
		next.ready = next.ready[1:]
		if m.after != nil && compareKeyed(&k, &keyed{pk: m.after.PartitionKey, rk: m.after.RowKey}) <= 0 {
			continue // admitted by a truncated bound
		}
		out = append(out, k.pi)
		last = &k
	}
	return out, keyItem(last.spk, last.srk), scanned, nil
}

// fill reads a page of every shard that has nothing ready and is not
// spent, concurrently, sized for want more items over all shards. On a
// table whose index has not answered yet it reads one shard first, so a
// table without the index costs one failed Query rather than one per shard.
func (m *merger) fill(ctx context.Context, want int) (int, error) {
	var need []*shardStream
	for _, sh := range m.shards {
		if len(sh.ready) == 0 && !sh.done {
			need = append(need, sh)
		}
	}
	if len(need) == 0 {
		return 0, nil
	}
	limit := int32(min((want+orderShards-1)/orderShards+1, 1000))
	probed := 0
	if _, seen := m.s.indexSeen.Load(m.loc.table); !seen {
		n, err := m.fillShards(ctx, need[:1], limit)
		if err != nil {
			return n, err
		}
		m.s.indexSeen.Store(m.loc.table, struct{}{})
		probed, need = n, need[1:]
	}
	n, err := m.fillShards(ctx, need, limit)
	return probed + n, err
}

// fillShards reads pages of the shards concurrently until each has items
// ready or is spent.
func (m *merger) fillShards(ctx context.Context, need []*shardStream, limit int32) (int, error) {
	var wg sync.WaitGroup
	counts := make([]int, len(need))
	errs := make([]error, len(need))
	for i, sh := range need {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for len(sh.ready) == 0 && !sh.done && errs[i] == nil {
				var n int
				n, errs[i] = m.readShard(ctx, sh, limit)
				counts[i] += n
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range counts {
		total += n
	}
	return total, errors.Join(errs...)
}

// readShard reads one page of a shard into ready (and held).
func (m *merger) readShard(ctx context.Context, sh *shardStream, limit int32) (int, error) {
	cctx, cancel := m.s.call(ctx)
	defer cancel()
	sink := entitySink{loc: m.loc}
	out, err := m.s.db.Query(cctx, &dynamodb.QueryInput{
		TableName:                 aws.String(m.loc.table),
		IndexName:                 aws.String(orderIndex),
		KeyConditionExpression:    aws.String(m.cond),
		ExpressionAttributeNames:  m.names,
		ExpressionAttributeValues: sh.values,
		ExclusiveStartKey:         sh.start,
		Limit:                     aws.Int32(limit),
	}, withEntitySink(&sink))
	if err != nil {
		if m.s.orderIndexUnusable(ctx, m.loc.table, err) {
			return 0, errNoOrderIndex
		}
		return 0, mapErr("query entities", err)
	}
	sh.start = out.LastEvaluatedKey
	sh.done = out.LastEvaluatedKey == nil
	items := sh.held
	for _, pi := range sink.pageItems(out.Items) {
		items = append(items, newKeyed(m.loc, pi))
	}
	// Keep back a trailing group of equal truncated encodings that the
	// next page may continue; sort the rest by key, which fixes the order
	// within groups whose end was seen.
	cut := len(items)
	if !sh.done && cut > 0 && items[cut-1].capped {
		tail := items[cut-1].order
		for cut > 0 && string(items[cut-1].order) == string(tail) {
			cut--
		}
	}
	sh.held = slices.Clone(items[cut:])
	release := items[:cut]
	slices.SortStableFunc(release, func(a, b keyed) int { return compareKeyed(&a, &b) })
	sh.ready = append(sh.ready, release...)
	return int(out.ScannedCount), nil
}
