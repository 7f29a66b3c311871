package store

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
)

// MaxPageSize is Azure's page size limit ($top), for tables and entities
// alike.
const MaxPageSize = 1000

// PageSize is the most entities a page may hold for a query's Top: 1 to
// 1000, with zero or less meaning 1000, as a request without $top gets.
func PageSize(top int) int {
	if top <= 0 || top > MaxPageSize {
		return MaxPageSize
	}
	return top
}

// scanCheckEvery is how many rows pass between a scan's clock and context
// checks.
const scanCheckEvery = 256

// KeyCursor is an engine's cursor over one table's entities in Azure's key
// order: PartitionKey, then RowKey, each in ordinal byte order. The key
// slices it returns are valid until it moves.
type KeyCursor interface {
	// Keys returns the keys of the entity at the cursor, ok false once it
	// has passed the table's last entity.
	Keys() (pk, rk []byte, ok bool, err error)
	// Entity decodes the entity at the cursor, whose keys are pk and rk,
	// and returns its stored size in bytes.
	Entity(pk, rk []byte) (*model.Entity, int, error)
	// Next moves to the next entity.
	Next()
	// SeekFirst moves to the table's first entity.
	SeekFirst()
	// SeekRow moves to the first entity of partition pk whose RowKey is
	// within lower, or to the partition's first when lower is nil.
	SeekRow(pk []byte, lower *model.Bound)
	// SeekPartitionAfter moves to the first entity of a PartitionKey
	// after pk.
	SeekPartitionAfter(pk []byte)
	// SeekAfter moves to the first entity after the keys pk and rk.
	SeekAfter(pk, rk string)
	// Err is the error that stopped the cursor, if one did.
	Err() error
}

// ScanBudget bounds the work of one page: after examining Rows entities,
// or at Deadline, a scan returns what it has with a continuation, as Azure
// does after about five seconds.
type ScanBudget struct {
	Rows     int
	Deadline time.Time
}

// ScanPage returns one page of q from an ordered engine's cursor over the
// query's table: it starts at the later of the query's lower bounds and
// the continuation, seeks past RowKeys outside the bounds rather than
// stepping over them, applies Match to every candidate, and stops at the
// page's size, at PageByteBudget, at the budget, or past the upper bounds.
// Every entity visited counts as examined, skipped ones too, so the budget
// bounds scans that skip many partitions.
func ScanPage(ctx context.Context, c KeyCursor, q Query, budget ScanBudget) (Page, error) {
	var page Page
	keys := q.Keys
	if keys.PartitionKey.Empty() || keys.RowKey.Empty() {
		return page, nil
	}
	_, pkIsExact := keys.PartitionKey.Exact()
	top := PageSize(q.Top)
	if err := seekStart(c, q); err != nil {
		return Page{}, err
	}
	examined, pageBytes := 0, 0
	var lastPK, lastRK []byte // the keys last examined, copied: the cursor's move on
	for {
		pk, rk, ok, err := c.Keys()
		if err != nil {
			return Page{}, err
		}
		if !ok || pastUpper(keys.PartitionKey.Upper, pk) {
			return page, c.Err()
		}
		examined++
		page.ItemsRead = examined
		lastPK, lastRK = append(lastPK[:0], pk...), append(lastRK[:0], rk...)
		switch {
		case below(keys.RowKey.Lower, rk):
			c.SeekRow(lastPK, keys.RowKey.Lower)
		case pastUpper(keys.RowKey.Upper, rk):
			if pkIsExact {
				return page, nil
			}
			// The rest of this partition lies past the upper bound too.
			c.SeekPartitionAfter(lastPK)
		default:
			e, size, err := c.Entity(pk, rk)
			if err != nil {
				return Page{}, fmt.Errorf("entity (%q, %q): %w", pk, rk, err)
			}
			if q.Match == nil || q.Match(e) {
				page.Entities = append(page.Entities, e)
				pageBytes += size
			}
			c.Next()
		}
		stop := len(page.Entities) == top || examined >= budget.Rows || pageBytes >= PageByteBudget
		if !stop && examined%scanCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return Page{}, err
			}
			stop = time.Now().After(budget.Deadline)
		}
		if stop {
			if mayContinue(c, keys, pkIsExact) {
				page.Next = &Cursor{PartitionKey: string(lastPK), RowKey: string(lastRK)}
			}
			return page, c.Err()
		}
	}
}

// seekStart moves c to the first entity the query can reach: the first at
// or after the lower bounds and after the continuation. Seeking to the
// bounds first and then past the continuation when the cursor has not
// passed it yet reaches the later of the two.
func seekStart(c KeyCursor, q Query) error {
	switch lower := q.Keys.PartitionKey.Lower; {
	case lower == nil:
		c.SeekFirst()
	case lower.Inclusive:
		c.SeekRow([]byte(lower.Value), q.Keys.RowKey.Lower)
	default:
		c.SeekPartitionAfter([]byte(lower.Value))
	}
	after := q.After
	if after == nil {
		return nil
	}
	pk, rk, ok, err := c.Keys()
	if err != nil {
		return err
	}
	if ok {
		if cmp := bytes.Compare(pk, []byte(after.PartitionKey)); cmp > 0 || (cmp == 0 && bytes.Compare(rk, []byte(after.RowKey)) > 0) {
			return nil
		}
	} else if c.Err() != nil {
		return c.Err()
	}
	c.SeekAfter(after.PartitionKey, after.RowKey)
	return nil
}

// mayContinue reports whether the entity at c, the one after the last
// examined, could still be part of the result, so the page needs a
// continuation.
func mayContinue(c KeyCursor, keys model.KeyRange, pkIsExact bool) bool {
	pk, rk, ok, err := c.Keys()
	switch {
	case err != nil:
		return true // let the next page report it
	case !ok:
		return false
	case pastUpper(keys.PartitionKey.Upper, pk):
		return false
	}
	return !pkIsExact || !pastUpper(keys.RowKey.Upper, rk)
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
