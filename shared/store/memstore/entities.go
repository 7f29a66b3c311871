package memstore

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/record"
)

// budgetCheckEvery is how many rows pass between clock and context checks.
const budgetCheckEvery = 256

// GetEntity returns a copy of one entity.
func (s *Store) GetEntity(ctx context.Context, account, tableName, partitionKey, rowKey string) (*model.Entity, error) {
	if err := s.lock(ctx, false); err != nil {
		return nil, err
	}
	defer s.unlock(false)
	t, err := s.table(account, tableName)
	if err != nil {
		return nil, err
	}
	r := t.rows.get(key{partitionKey, rowKey})
	if r == nil {
		return nil, store.ErrEntityNotFound
	}
	return r.entity()
}

// change is one checked op, ready to apply: put row, or remove k when row
// is nil.
type change struct {
	k   key
	row *row
}

// Write applies ops atomically: it checks every op against the table
// under the exclusive lock, then applies them all, so no reader sees a
// part and a failed op leaves the table as it was.
func (s *Store) Write(ctx context.Context, account, tableName string, ops []store.Op) error {
	var seen map[key]int
	if len(ops) > 1 {
		seen = make(map[key]int, len(ops))
	}
	for i, op := range ops {
		if err := op.Check(); err != nil {
			return &store.OpError{Index: i, Err: err}
		}
		if seen != nil {
			k := key{op.Entity.PartitionKey, op.Entity.RowKey}
			if j, dup := seen[k]; dup {
				return &store.OpError{Index: i, Err: fmt.Errorf("memstore: op %d and op %d name the same entity", j, i)}
			}
			seen[k] = i
		}
	}
	if err := s.lock(ctx, true); err != nil {
		return err
	}
	defer s.unlock(true)
	t, err := s.table(account, tableName)
	if err != nil {
		return err
	}
	// Ops name distinct entities, so checking all of them against the
	// table before any applies is the same as checking each in turn.
	changes := make([]change, len(ops))
	for i, op := range ops {
		k := key{op.Entity.PartitionKey, op.Entity.RowKey}
		c, err := s.checkOp(t.rows.get(k), k, op)
		if err != nil {
			return &store.OpError{Index: i, Err: err}
		}
		changes[i] = c
	}
	for i, c := range changes {
		if c.row == nil {
			t.rows.remove(c.k)
		} else {
			t.rows.put(c.row)
			// The Timestamp stored, for the answer's ETag (store.Store.Write).
			ops[i].Entity.Timestamp = c.row.ts
		}
	}
	return nil
}

// tick is the Timestamp's precision (the ETag's 7 fractional digits).
const tick = 100 * time.Nanosecond

// checkOp checks one op against the stored row (nil when absent) and
// returns the change it makes, with the new row encoded. It runs under the
// write lock and leaves op.Entity as it was.
func (s *Store) checkOp(current *row, k key, op store.Op) (change, error) {
	if op.Kind == store.OpInsert {
		if current != nil {
			return change{}, store.ErrEntityExists
		}
		return s.newChange(k, op.Entity)
	}
	switch op.Cond {
	case store.CondExists:
		if current == nil {
			return change{}, store.ErrEntityNotFound
		}
	case store.CondTimestamp:
		if current == nil {
			return change{}, store.ErrEntityNotFound
		}
		if !current.ts.Equal(op.Timestamp) {
			return change{}, store.ErrConditionFailed
		}
	}
	if op.Kind == store.OpDelete {
		if current == nil {
			// Delete always needs the entity, with or without If-Match.
			return change{}, store.ErrEntityNotFound
		}
		return change{k: k}, nil
	}
	e := *op.Entity // the Timestamp and, for a merge, the properties change
	if current != nil && !e.Timestamp.After(current.ts) {
		// The clock stepped back (or an injected one lags): the new
		// version goes just past the stored one, so an entity's Timestamps
		// only increase and no two versions share an ETag. The store is one
		// process and this runs under its write lock, so the comparison is
		// exact.
		e.Timestamp = current.ts.Add(tick)
	}
	// OpMerge: without a stored entity (Insert Or Merge) the sent
	// properties are the whole entity.
	if op.Kind == store.OpMerge && current != nil {
		stored, err := current.entity()
		if err != nil {
			return change{}, err
		}
		maps.Copy(stored.Properties, e.Properties)
		e.Properties = stored.Properties
		if err := store.CheckMergedLimits(&e); err != nil {
			return change{}, err
		}
	}
	return s.newChange(k, &e)
}

// newChange encodes e as the new row of k. The row's keys and record are
// one string of their own, so a stored row keeps no request's memory
// alive, and it holds no pointers for the garbage collector to trace
// (an entity's map of values has dozens).
func (s *Store) newChange(k key, e *model.Entity) (change, error) {
	b := append(append(s.scratch[:0], k.pk...), k.rk...)
	b, err := record.AppendEntity(b, e)
	if err != nil {
		return change{}, err
	}
	s.scratch = b
	data := string(b)
	pkEnd, rkEnd := len(k.pk), len(k.pk)+len(k.rk)
	stored := key{data[:pkEnd], data[pkEnd:rkEnd]}
	return change{k: stored, row: &row{key: stored, ts: e.Timestamp, rec: data[rkEnd:], size: model.EntitySize(e)}}, nil
}

// QueryEntities returns one page of a query, walking the table in key
// order from the first key the query's bounds and cursor allow.
func (s *Store) QueryEntities(ctx context.Context, account, tableName string, q store.Query) (store.Page, error) {
	if err := s.lock(ctx, false); err != nil {
		return store.Page{}, err
	}
	defer s.unlock(false)
	t, err := s.table(account, tableName)
	if err != nil {
		return store.Page{}, err
	}
	var page store.Page
	keys := q.Keys
	if keys.PartitionKey.Empty() || keys.RowKey.Empty() {
		return page, nil
	}
	_, pkIsExact := keys.PartitionKey.Exact()
	top := store.PageSize(q.Top)
	deadline := time.Now().Add(s.scanTime)
	rs := &t.rows
	p, _ := rs.seek(firstKey(q))
	examined, pageBytes := 0, 0
	var scratch model.Entity // each examined row, decoded for the filter
	for r := rs.at(p); r != nil; r = rs.at(p) {
		if pastUpper(keys.PartitionKey.Upper, r.pk) {
			return page, nil
		}
		examined++
		page.ItemsRead = examined
		last := r.key
		switch {
		case below(keys.RowKey.Lower, r.rk):
			p, _ = rs.seek(rowSeekKey(r.pk, keys.RowKey.Lower))
		case pastUpper(keys.RowKey.Upper, r.rk):
			if pkIsExact {
				return page, nil
			}
			// The rest of this partition lies past the upper bound too;
			// pk+"\x00" is the least PartitionKey after pk.
			p, _ = rs.seek(key{pk: r.pk + "\x00"})
		default:
			e, err := r.match(q.Match, &scratch)
			if err != nil {
				return store.Page{}, err
			}
			if e != nil {
				page.Entities = append(page.Entities, e)
				pageBytes += r.size
			}
			p = rs.next(p)
		}
		stop := len(page.Entities) == top || examined >= s.scanRows || pageBytes >= store.PageByteBudget
		if !stop && examined%budgetCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return store.Page{}, err
			}
			stop = time.Now().After(deadline)
		}
		if stop {
			if next := rs.at(p); next != nil && mayContinue(q.Keys, next.key, pkIsExact) {
				page.Next = &store.Cursor{PartitionKey: last.pk, RowKey: last.rk}
			}
			return page, nil
		}
	}
	return page, nil
}

// firstKey is the first key the query can reach: the later of the lower
// bounds and the key just after q.After.
func firstKey(q store.Query) key {
	var start key
	if lower := q.Keys.PartitionKey.Lower; lower != nil {
		if lower.Inclusive {
			start = rowSeekKey(lower.Value, q.Keys.RowKey.Lower)
		} else {
			start = key{pk: lower.Value + "\x00"}
		}
	}
	if after := q.After; after != nil {
		// The least key strictly after a key appends a zero byte to its
		// RowKey.
		resume := key{after.PartitionKey, after.RowKey + "\x00"}
		if compareKeys(resume, start) > 0 {
			start = resume
		}
	}
	return start
}

// rowSeekKey is the first key of partition pk at or after the RowKey lower
// bound (the whole partition when the bound is open).
func rowSeekKey(pk string, lower *model.Bound) key {
	switch {
	case lower == nil:
		return key{pk: pk}
	case lower.Inclusive:
		return key{pk, lower.Value}
	}
	return key{pk, lower.Value + "\x00"}
}

// mayContinue reports whether next, the key after the last one examined,
// could still be part of the result, so the page needs a continuation.
func mayContinue(keys model.KeyRange, next key, pkIsExact bool) bool {
	if pastUpper(keys.PartitionKey.Upper, next.pk) {
		return false
	}
	return !pkIsExact || !pastUpper(keys.RowKey.Upper, next.rk)
}

// below reports whether k lies under a lower bound.
func below(lower *model.Bound, k string) bool {
	return lower != nil && (k < lower.Value || (k == lower.Value && !lower.Inclusive))
}

// pastUpper reports whether k lies beyond an upper bound.
func pastUpper(upper *model.Bound, k string) bool {
	return upper != nil && (k > upper.Value || (k == upper.Value && !upper.Inclusive))
}
