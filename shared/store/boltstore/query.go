package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// budgetCheckEvery is how many rows pass between clock and context checks.
const budgetCheckEvery = 256

// QueryEntities returns one page of a query.
func (s *Store) QueryEntities(ctx context.Context, account, table string, q store.Query) (store.Page, error) {
	if err := s.enter(ctx); err != nil {
		return store.Page{}, err
	}
	defer s.leave()
	var page store.Page
	err := s.db.View(func(tx *bolt.Tx) error {
		b := entityBucket(tx, account, table)
		if b == nil {
			return fmt.Errorf("%q: %w", table, store.ErrTableNotFound)
		}
		sc := scan{
			ctx:      ctx,
			q:        q,
			top:      clampTop(q.Top),
			maxRows:  s.scanRows,
			deadline: time.Now().Add(s.scanTime),
		}
		var err error
		page, err = sc.run(b.Cursor())
		return err
	})
	if err != nil {
		return store.Page{}, wrapErr("query entities", err)
	}
	return page, nil
}

// scan is the state of one page's walk over a table bucket.
type scan struct {
	ctx      context.Context
	q        store.Query
	top      int
	maxRows  int
	deadline time.Time
}

func (sc *scan) run(c *bolt.Cursor) (store.Page, error) {
	var page store.Page
	keys := sc.q.Keys
	if keys.PartitionKey.Empty() || keys.RowKey.Empty() {
		return page, nil
	}
	_, pkIsExact := keys.PartitionKey.Exact()

	k, v := sc.first(c)
	examined, pageBytes := 0, 0
	for k != nil {
		pk, rk, err := splitKey(k)
		if err != nil {
			return store.Page{}, err
		}
		if pastUpper(keys.PartitionKey.Upper, pk) {
			return page, nil
		}
		// Every key visited counts as examined, skipped ones too: the
		// cursor may rest on any of them, and the budget must bound scans
		// that skip many partitions.
		examined++
		page.ItemsRead = examined
		last := k
		switch {
		case below(keys.RowKey.Lower, rk):
			// Skip RowKeys outside the bounds by seeking, not stepping:
			// the rows below the lower bound end at pk\x00<lower>.
			k, v = c.Seek(rowSeekKey(pk, keys.RowKey.Lower))
		case pastUpper(keys.RowKey.Upper, rk):
			if pkIsExact {
				return page, nil
			}
			// The rest of this partition lies past the upper bound too.
			k, v = c.Seek(nextPartitionKey(pk))
		default:
			e, err := decodeEntity(pk, rk, v)
			if err != nil {
				return store.Page{}, fmt.Errorf("entity (%q, %q): %w", pk, rk, err)
			}
			if sc.q.Match == nil || sc.q.Match(e) {
				page.Entities = append(page.Entities, e)
				pageBytes += len(v)
			}
			k, v = c.Next()
		}
		stop := len(page.Entities) == sc.top || examined >= sc.maxRows || pageBytes >= store.PageByteBudget
		if !stop && examined%budgetCheckEvery == 0 {
			if err := sc.ctx.Err(); err != nil {
				return store.Page{}, err
			}
			stop = time.Now().After(sc.deadline)
		}
		if stop {
			if sc.mayContinue(k, pkIsExact) {
				page.Next = cursorAt(last)
			}
			return page, nil
		}
	}
	return page, nil
}

// first positions the cursor on the first key the query can reach: the
// later of the Keys lower bound and the key just after q.After.
func (sc *scan) first(c *bolt.Cursor) (k, v []byte) {
	var start []byte
	if lower := sc.q.Keys.PartitionKey.Lower; lower != nil {
		if lower.Inclusive {
			start = rowSeekKey([]byte(lower.Value), sc.q.Keys.RowKey.Lower)
		} else {
			start = nextPartitionKey([]byte(lower.Value))
		}
	}
	if after := sc.q.After; after != nil {
		// The smallest key strictly after a key is that key plus a zero
		// byte.
		resume := append(entityKey(after.PartitionKey, after.RowKey), 0)
		if bytes.Compare(resume, start) > 0 {
			start = resume
		}
	}
	if start == nil {
		return c.First()
	}
	return c.Seek(start)
}

// mayContinue reports whether next, the key after the last one examined,
// could still be part of the result, so the page needs a continuation.
func (sc *scan) mayContinue(next []byte, pkIsExact bool) bool {
	if next == nil {
		return false
	}
	pk, rk, err := splitKey(next)
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
func rowSeekKey(pk []byte, lower *model.Bound) []byte {
	k := make([]byte, 0, len(pk)+2+boundLen(lower))
	k = append(k, pk...)
	k = append(k, keySeparator)
	if lower != nil {
		k = append(k, lower.Value...)
		if !lower.Inclusive {
			k = append(k, 0) // the smallest string after the bound
		}
	}
	return k
}

// nextPartitionKey is the first key after every key of partition pk: every
// key of pk starts with pk\x00, and any greater PartitionKey is at least
// pk\x01 since PartitionKeys hold no zero byte.
func nextPartitionKey(pk []byte) []byte {
	k := make([]byte, 0, len(pk)+1)
	k = append(k, pk...)
	return append(k, keySeparator+1)
}

func boundLen(b *model.Bound) int {
	if b == nil {
		return 0
	}
	return len(b.Value) + 1
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

func cursorAt(k []byte) *store.Cursor {
	pk, rk, _ := splitKey(k) // k was split successfully before
	return &store.Cursor{PartitionKey: string(pk), RowKey: string(rk)}
}
