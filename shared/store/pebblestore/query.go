package pebblestore

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// budgetCheckEvery is how many rows pass between clock and context checks.
const budgetCheckEvery = 256

// QueryEntities returns one page of a query: an iterator over the table's
// key range, bounded by the query's PartitionKey range, that seeks past
// RowKeys outside the bounds and applies Match to every candidate.
func (s *Store) QueryEntities(ctx context.Context, account, table string, q store.Query) (page store.Page, err error) {
	if err := s.enter(ctx); err != nil {
		return store.Page{}, err
	}
	defer s.leave(&err)
	keys := q.Keys
	prefix := tablePrefix(account, strings.ToLower(table))
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: upperBound(prefix, keys.PartitionKey)})
	if err != nil {
		return store.Page{}, fmt.Errorf("pebblestore: query entities: %w", err)
	}
	// The iterator reads the writes applied when it was made.
	seen := s.sync.appliedCount()
	sc := scan{ctx: ctx, q: q, prefix: prefix, top: clampTop(q.Top), maxRows: s.scanRows, deadline: time.Now().Add(s.scanTime)}
	page, err = sc.run(it)
	if cerr := it.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil && len(page.Entities) == 0 && page.Next == nil {
		// Nothing in range: an empty table, or none at all.
		err = s.checkTable(account, table)
	}
	if err != nil {
		return store.Page{}, fmt.Errorf("pebblestore: query entities: %w", err)
	}
	if err := s.sync.wait(ctx, seen); err != nil {
		return store.Page{}, err
	}
	return page, nil
}

// upperBound is the iterator's exclusive upper bound: past the query's
// PartitionKey upper bound, else past the table.
func upperBound(prefix []byte, pk model.Bounds) []byte {
	b := bytes.Clone(prefix)
	switch {
	case pk.Upper == nil:
		return componentPast(b)
	case pk.Upper.Inclusive:
		// Past every key of that PartitionKey.
		return componentPast(appendComponent(b, pk.Upper.Value))
	}
	// Every key of a smaller PartitionKey sorts before the first key of
	// this one (keys.go).
	return appendComponent(b, pk.Upper.Value)
}

// scan is the state of one page's walk over a table's range.
type scan struct {
	ctx      context.Context
	q        store.Query
	prefix   []byte
	top      int
	maxRows  int
	deadline time.Time
}

func (sc *scan) run(it *pebble.Iterator) (store.Page, error) {
	var page store.Page
	keys := sc.q.Keys
	if keys.PartitionKey.Empty() || keys.RowKey.Empty() {
		return page, nil
	}
	_, pkIsExact := keys.PartitionKey.Exact()
	valid := sc.first(it)
	examined, pageBytes := 0, 0
	var last []byte // the last key examined, copied: the iterator's moves on
	for valid {
		last = append(last[:0], it.Key()...)
		pk, rk, err := splitEntityKey(last[len(sc.prefix):])
		if err != nil {
			return store.Page{}, err
		}
		if pastUpper(keys.PartitionKey.Upper, pk) {
			return page, nil
		}
		// Every key visited counts as examined, skipped ones too: the
		// budget must bound scans that skip many partitions.
		examined++
		page.ItemsRead = examined
		switch {
		case below(keys.RowKey.Lower, rk):
			// Skip RowKeys outside the bounds by seeking, not stepping.
			valid = it.SeekGE(sc.rowSeekKey(pk, keys.RowKey.Lower))
		case pastUpper(keys.RowKey.Upper, rk):
			if pkIsExact {
				return page, nil
			}
			// The rest of this partition lies past the upper bound too.
			valid = it.SeekGE(componentPast(appendComponent(bytes.Clone(sc.prefix), string(pk))))
		default:
			v := it.Value()
			e, err := decodeEntity(pk, rk, string(v))
			if err != nil {
				return store.Page{}, fmt.Errorf("entity (%q, %q): %w", pk, rk, err)
			}
			if sc.q.Match == nil || sc.q.Match(e) {
				page.Entities = append(page.Entities, e)
				pageBytes += len(v)
			}
			valid = it.Next()
		}
		stop := len(page.Entities) == sc.top || examined >= sc.maxRows || pageBytes >= store.PageByteBudget
		if !stop && examined%budgetCheckEvery == 0 {
			if err := sc.ctx.Err(); err != nil {
				return store.Page{}, err
			}
			stop = time.Now().After(sc.deadline)
		}
		if stop {
			if valid && sc.mayContinue(it.Key(), pkIsExact) {
				pk, rk, _ := splitEntityKey(last[len(sc.prefix):]) // split above
				page.Next = &store.Cursor{PartitionKey: string(pk), RowKey: string(rk)}
			}
			return page, it.Error()
		}
	}
	return page, it.Error()
}

// first positions the iterator on the first key the query can reach: the
// later of the Keys lower bound and the key just after q.After.
func (sc *scan) first(it *pebble.Iterator) bool {
	var start []byte
	if lower := sc.q.Keys.PartitionKey.Lower; lower != nil {
		if lower.Inclusive {
			start = sc.rowSeekKey([]byte(lower.Value), sc.q.Keys.RowKey.Lower)
		} else {
			start = componentPast(appendComponent(bytes.Clone(sc.prefix), lower.Value))
		}
	}
	if after := sc.q.After; after != nil {
		// The smallest key strictly after a key is that key plus a zero
		// byte (the RowKey is the key's raw last part).
		resume := append(appendEntityKey(bytes.Clone(sc.prefix), after.PartitionKey, after.RowKey), 0)
		if bytes.Compare(resume, start) > 0 {
			start = resume
		}
	}
	if start == nil {
		return it.First()
	}
	return it.SeekGE(start)
}

// mayContinue reports whether next, the key after the last one examined,
// could still be part of the result, so the page needs a continuation.
func (sc *scan) mayContinue(next []byte, pkIsExact bool) bool {
	pk, rk, err := splitEntityKey(next[len(sc.prefix):])
	if err != nil {
		return true // let the next page report it
	}
	if pastUpper(sc.q.Keys.PartitionKey.Upper, pk) {
		return false
	}
	return !pkIsExact || !pastUpper(sc.q.Keys.RowKey.Upper, rk)
}

// rowSeekKey is the first key of partition pk at or after the RowKey lower
// bound (the whole partition when the bound is open).
func (sc *scan) rowSeekKey(pk []byte, lower *model.Bound) []byte {
	k := appendComponent(bytes.Clone(sc.prefix), string(pk))
	if lower != nil {
		k = append(k, lower.Value...)
		if !lower.Inclusive {
			k = append(k, 0) // the smallest string after the bound
		}
	}
	return k
}

// below reports whether k lies under a lower bound.
func below(lower *model.Bound, k []byte) bool {
	if lower == nil {
		return false
	}
	c := bytes.Compare(k, []byte(lower.Value))
	return c < 0 || (c == 0 && !lower.Inclusive)
}

// pastUpper reports whether k lies beyond an upper bound.
func pastUpper(upper *model.Bound, k []byte) bool {
	if upper == nil {
		return false
	}
	c := bytes.Compare(k, []byte(upper.Value))
	return c > 0 || (c == 0 && !upper.Inclusive)
}
