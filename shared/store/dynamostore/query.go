package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Queries. With a PartitionKey equality the store runs a Query on that
// partition with the RowKey bounds (and the cursor) in the key condition, so
// entities come in RowKey order, read strongly consistently. Otherwise it
// merges the shards of the order index (merge.go), in key order, or, on a
// table without the index, runs a Scan, which walks the partitions in
// DynamoDB's hash order, not by PartitionKey; within a partition entities
// still come in RowKey order. Match is evaluated exactly, in Go, on every
// entity read; DynamoDB's Limit counts items read, so a page keeps reading
// until Top entities match, the data ends, or the time (QueryTimeBudget) or
// size (QueryByteBudget) budget runs out, and then may hold fewer than Top
// entities with a continuation, as Azure's pages do.

// reader reads one DynamoDB page; scanned is the number of items DynamoDB
// read for it (ScannedCount).
type reader func(ctx context.Context, limit int32, start item) (items []pageItem, last item, scanned int, err error)

// QueryEntities returns one page of a query.
func (s *Store) QueryEntities(ctx context.Context, account, table string, q store.Query) (page store.Page, err error) {
	err = s.onTable(ctx, account, table, false, func(loc location) error {
		page, err = s.queryEntities(ctx, loc, q)
		return err
	})
	return page, err
}

func (s *Store) queryEntities(ctx context.Context, loc location, q store.Query) (store.Page, error) {
	top := store.PageSize(q.Top)
	pg := func() *pager {
		return &pager{s: s, loc: &loc, q: q, top: top, deadline: time.Now().Add(s.opts.QueryTimeBudget)}
	}
	if pk, ok := q.Keys.PartitionKey.Exact(); ok {
		if len(encodeKey(pk)) > loc.maxPKBytes() {
			// No stored entity has a key DynamoDB cannot index.
			return store.Page{}, nil
		}
		read, empty := s.partitionReader(&loc, pk, q)
		if empty {
			return store.Page{}, nil
		}
		return pg().run(ctx, read, nil)
	}
	if q.Keys.PartitionKey.Empty() || q.Keys.RowKey.Empty() {
		return store.Page{}, nil
	}
	if s.orderIndexUsable(loc.table) {
		read, empty := s.orderedReader(&loc, q)
		if empty {
			return store.Page{}, nil
		}
		page, err := pg().run(ctx, read, nil)
		if !errors.Is(err, errNoOrderIndex) {
			return page, err
		}
		if loc.shared() {
			// The shared table's index is part of the deployment; a Scan
			// would read every Azure table of it.
			return store.Page{}, fmt.Errorf("dynamostore: the shared table %s has no usable order index: %w", loc.table, store.ErrUnavailable)
		}
		s.markNoIndex(loc.table)
	}
	var start item
	if q.After != nil {
		pk := encodeKey(q.After.PartitionKey)
		if len(pk) > maxHashKeyBytes {
			// A scan resumes at a partition's place in DynamoDB's hash
			// order, which only a key DynamoDB can hold has: this store
			// never hands out such a cursor.
			return store.Page{}, fmt.Errorf("dynamostore: continuation PartitionKey of %d bytes: %w", len(pk), store.ErrKeyTooLong)
		}
		start = keyItem(pk, lowerBound(encodeKey(q.After.RowKey), false))
	}
	return pg().run(ctx, s.scanReader(&loc), start)
}

// partitionReader queries one partition. The cursor becomes an exclusive
// lower bound, so the key condition alone decides where reading starts.
// empty reports that no key can match.
func (s *Store) partitionReader(loc *location, pk string, q store.Query) (reader, bool) {
	lower, upper := q.Keys.RowKey.Lower, q.Keys.RowKey.Upper
	if q.After != nil {
		switch {
		case q.After.PartitionKey > pk:
			return nil, true
		case q.After.PartitionKey == pk:
			after := &model.Bound{Value: q.After.RowKey}
			if lower == nil || after.Value > lower.Value || after.Value == lower.Value && lower.Inclusive {
				lower = after
			}
		}
	}
	if (model.Bounds{Lower: lower, Upper: upper}).Empty() {
		return nil, true
	}
	x := newExpr()
	cond := x.name("#pk", attrPartitionKey) + " = " + x.value(":pk", str(loc.pk(pk)))
	// Stored bounds (see lowerBound and upperBound); what they let through
	// beyond the exact range, Keys.Contains and the cursor check drop.
	var lo, hi string
	if lower != nil {
		lo = lowerBound(encodeKey(lower.Value), lower.Inclusive)
	}
	if upper != nil {
		var ok bool
		if hi, ok = upperBound(encodeKey(upper.Value), upper.Inclusive); !ok {
			upper = nil
		}
	}
	switch {
	case lower != nil && upper != nil:
		if lo > hi {
			return nil, true
		}
		cond += " AND " + x.name("#rk", attrRowKey) + " BETWEEN " + x.value(":lo", str(lo)) + " AND " + x.value(":hi", str(hi))
	case lower != nil:
		cond += " AND " + x.name("#rk", attrRowKey) + " >= " + x.value(":lo", str(lo))
	case upper != nil:
		cond += " AND " + x.name("#rk", attrRowKey) + " <= " + x.value(":hi", str(hi))
	}
	return func(ctx context.Context, limit int32, start item) ([]pageItem, item, int, error) {
		cctx, cancel := s.call(ctx)
		defer cancel()
		sink := entitySink{loc: loc}
		out, err := s.db.Query(cctx, &dynamodb.QueryInput{
			TableName:                 aws.String(loc.table),
			ConsistentRead:            aws.Bool(true),
			KeyConditionExpression:    aws.String(cond),
			ExpressionAttributeNames:  x.names,
			ExpressionAttributeValues: x.values,
			ExclusiveStartKey:         start,
			Limit:                     aws.Int32(limit),
		}, withEntitySink(&sink))
		if err != nil {
			return nil, nil, 0, mapErr("query entities", err)
		}
		return sink.pageItems(out.Items), out.LastEvaluatedKey, int(out.ScannedCount), nil
	}, false
}

func (s *Store) scanReader(loc *location) reader {
	return func(ctx context.Context, limit int32, start item) ([]pageItem, item, int, error) {
		cctx, cancel := s.call(ctx)
		defer cancel()
		sink := entitySink{loc: loc}
		out, err := s.db.Scan(cctx, &dynamodb.ScanInput{
			TableName:         aws.String(loc.table),
			ConsistentRead:    aws.Bool(true),
			ExclusiveStartKey: start,
			Limit:             aws.Int32(limit),
		}, withEntitySink(&sink))
		if err != nil {
			return nil, nil, 0, mapErr("scan entities", err)
		}
		return sink.pageItems(out.Items), out.LastEvaluatedKey, int(out.ScannedCount), nil
	}
}

// pager assembles one page from DynamoDB pages.
type pager struct {
	s        *Store
	loc      *location
	q        store.Query
	top      int
	deadline time.Time

	page     store.Page
	bytes    int
	examined int
	matched  int
	// pos is the key of the last entity examined (or overflow item
	// skipped): the page's continuation when it stops early.
	pos *store.Cursor
	// pending is a chunked entity whose overflow items are still to come.
	pending *pendingEntity
}

type pendingEntity struct {
	pk, rk string // stored keys
	main   item
	meta   itemMeta
	chunks []item
}

// stopReason says whether, and why, a page is complete.
type stopReason int

const (
	keepReading stopReason = iota
	stopTop                // Top entities matched with the item just read
	stopBudget             // the size budget is spent with the item just read
	// stopBefore: the page filled up before the item just read, which is
	// left for the next page.
	stopBefore
)

func (pg *pager) run(ctx context.Context, read reader, start item) (store.Page, error) {
	// One item past Top: DynamoDB answers a read that stops exactly at its
	// Limit with a LastEvaluatedKey even when nothing follows, which would
	// send clients after an empty last page. The extra item, when there is
	// one, is left for the next page.
	limit := pg.top + 1
	for {
		items, last, scanned, err := read(ctx, int32(limit), start)
		pg.page.ItemsRead += scanned
		if err != nil {
			if pg.pos != nil && ctx.Err() == nil && errors.Is(err, store.ErrUnavailable) {
				// A read timed out after the page made progress: hand back
				// what it has with a continuation, as Azure does when its
				// time limit ends a page, rather than fail the query.
				pg.page.Next = pg.pos
				return pg.finish(ctx)
			}
			return store.Page{}, err
		}
		for i, pi := range items {
			stop, err := pg.consume(ctx, pi)
			if err != nil {
				return store.Page{}, err
			}
			if stop != keepReading {
				pg.page.Next = pg.pos
				if stop != stopBefore && i == len(items)-1 && last == nil {
					pg.page.Next = nil // nothing left to read
				}
				return pg.finish(ctx)
			}
		}
		if last == nil {
			pg.page.Next = nil
			return pg.finish(ctx)
		}
		start = last
		if time.Now().After(pg.deadline) {
			if pg.pos == nil {
				pk, rk := stringAttr(last, attrPartitionKey), stringAttr(last, attrRowKey)
				mainRK, _ := splitRowKey(rk)
				pg.pos = &store.Cursor{PartitionKey: pg.loc.unpk(pk), RowKey: decodeKey(mainRK)}
			}
			pg.page.Next = pg.pos
			return pg.finish(ctx)
		}
		limit = pg.nextLimit(limit)
	}
}

// nextLimit sizes the next read of entities: see nextReadLimit.
func (pg *pager) nextLimit(prev int) int {
	return nextReadLimit(prev, pg.top-len(pg.page.Entities), pg.examined, pg.matched)
}

// nextReadLimit sizes the next read of a listing (entities, or tables in
// the catalog) from the share of the items examined so far that matched,
// so a selective filter reads in large pages and an unfiltered listing
// reads no more than it returns: remaining, the items the page still wants,
// plus one to learn whether more follow. Before anything matched it grows
// fourfold; at most 1001, Top's limit of 1,000 plus one.
func nextReadLimit(prev, remaining, examined, matched int) int {
	next := 4 * prev
	if matched > 0 {
		next = remaining*examined/matched + 1
	}
	return min(max(next, remaining+1, 1), 1001)
}

// finish resolves a chunked entity still waiting for its overflow items.
// When the page already ended on Top, that entity lies after the cursor and
// is left for the next page.
func (pg *pager) finish(ctx context.Context) (store.Page, error) {
	if pg.pending != nil && len(pg.page.Entities) < pg.top {
		if _, err := pg.flush(ctx); err != nil {
			return store.Page{}, err
		}
		if pg.page.Next != nil {
			pg.page.Next = pg.pos
		}
	}
	return pg.page, nil
}

// consume handles one item in reading order.
func (pg *pager) consume(ctx context.Context, pi pageItem) (stopReason, error) {
	if pi.entity != nil {
		// A single-item entity, decoded with the page.
		if pg.pending != nil {
			if stop, err := pg.flush(ctx); err != nil || stop != keepReading {
				return stopBefore, err
			}
		}
		return pg.consider(pi.entity, pi.size), nil
	}
	it := pi.it
	pk, storedRK := stringAttr(it, attrPartitionKey), stringAttr(it, attrRowKey)
	rk, chunk := splitRowKey(storedRK)
	if chunk > 0 {
		p := pg.pending
		if p != nil && p.pk == pk && p.rk == rk && chunk == len(p.chunks)+1 && stringAttr(it, attrGen) == p.meta.gen {
			p.chunks = append(p.chunks, it)
			if len(p.chunks) == p.meta.chunks {
				pg.pending = nil
				e, err := decodeItems(pg.loc, p.main, p.chunks)
				if err != nil {
					return keepReading, err
				}
				return pg.consider(e, itemSize(p.main)+sumSizes(p.chunks)), nil
			}
			return keepReading, nil
		}
		if p == nil {
			// An overflow item whose entity was read on an earlier page.
			pg.pos = &store.Cursor{PartitionKey: pg.loc.unpk(pk), RowKey: decodeKey(rk)}
		}
		return keepReading, nil
	}
	if pg.pending != nil {
		if stop, err := pg.flush(ctx); err != nil || stop != keepReading {
			return stopBefore, err
		}
	}
	meta := metaOf(it)
	if meta.chunks > 0 {
		pg.pending = &pendingEntity{pk: pk, rk: rk, main: it, meta: meta}
		return keepReading, nil
	}
	e, err := decodeItems(pg.loc, it, nil)
	if err != nil {
		return keepReading, err
	}
	return pg.consider(e, itemSize(it)), nil
}

// flush reads the pending chunked entity whole, when the scan did not bring
// its overflow items right after it (a page boundary, or a torn read of a
// concurrent rewrite).
func (pg *pager) flush(ctx context.Context) (stopReason, error) {
	p := pg.pending
	pg.pending = nil
	main, chunks, err := pg.s.readChunked(ctx, pg.loc, p.pk, p.rk, p.meta.chunks)
	if err != nil {
		return keepReading, err
	}
	if main == nil { // deleted meanwhile
		pg.pos = &store.Cursor{PartitionKey: pg.loc.unpk(p.pk), RowKey: decodeKey(p.rk)}
		return keepReading, nil
	}
	e, err := decodeItems(pg.loc, main, chunks)
	if err != nil {
		return keepReading, err
	}
	return pg.consider(e, itemSize(main)+sumSizes(chunks)), nil
}

// consider examines one whole entity.
func (pg *pager) consider(e *model.Entity, size int) stopReason {
	if a := pg.q.After; a != nil && e.PartitionKey == a.PartitionKey && e.RowKey <= a.RowKey {
		// Read again only because the cursor's RowKey was too long to
		// start the read exactly at it (see lowerBound): it was on an
		// earlier page, or never was.
		return keepReading
	}
	pg.examined++
	pg.pos = &store.Cursor{PartitionKey: e.PartitionKey, RowKey: e.RowKey}
	if !pg.q.Keys.Contains(e.PartitionKey, e.RowKey) || pg.q.Match != nil && !pg.q.Match(e) {
		return keepReading
	}
	pg.matched++
	pg.page.Entities = append(pg.page.Entities, e)
	pg.bytes += size
	switch {
	case len(pg.page.Entities) >= pg.top:
		return stopTop
	case pg.bytes >= pg.s.opts.QueryByteBudget:
		return stopBudget
	}
	return keepReading
}

func sumSizes(items []item) int {
	n := 0
	for _, it := range items {
		n += itemSize(it)
	}
	return n
}

// lowerBound is the stored RowKey a read starts at (inclusive) to reach
// every key at or after enc (inclusive) or strictly after it. Strictly
// after a key means past its overflow items too (enc+"\x02"); a key too
// long for an overflow item (enc+"\x01n" over DynamoDB's 1024 bytes) has
// none, and then the bound is the key itself. A bound longer than any
// stored key is cut to its longest prefix DynamoDB takes, which starts the
// read early. Either way the read may start before the true bound, and
// the caller drops what lies before it (Keys.Contains, the cursor check in
// consider).
func lowerBound(enc string, inclusive bool) string {
	switch {
	case len(enc) > maxRangeKeyBytes:
		return runePrefix(enc, maxRangeKeyBytes)
	case !inclusive && len(enc)+len(afterKey) <= maxRangeKeyBytes:
		return enc + afterKey
	}
	return enc
}

// upperBound is the stored RowKey a read ends at (inclusive) to reach
// every key at or before enc (inclusive) or strictly before it, including
// enc's own overflow items when inclusive. ok is false when enc is longer
// than any stored key can be: the read then has no upper bound, and the
// caller drops what lies beyond.
func upperBound(enc string, inclusive bool) (bound string, ok bool) {
	switch {
	case len(enc) > maxRangeKeyBytes:
		return "", false
	case inclusive && len(enc)+len(afterKey) <= maxRangeKeyBytes:
		return enc + afterKey, true
	}
	return enc, true
}

// runePrefix is the longest prefix of s of at most n bytes that does not
// cut a UTF-8 sequence: DynamoDB strings are UTF-8.
func runePrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
