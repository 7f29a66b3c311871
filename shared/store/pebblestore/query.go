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
	page, err = store.ScanPage(ctx, &keyCursor{it: it, prefix: prefix}, q, store.ScanBudget{Rows: s.scanRows, Deadline: time.Now().Add(s.scanTime)})
	if cerr := it.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err == nil && len(page.Entities) == 0 && page.Next == nil {
		// Nothing in range: an empty table, or none at all. The table set
		// that tells which may show a create or a delete the iterator
		// predates, so the answer, found or not, waits for the writes
		// counted after it was read.
		err = s.checkTable(account, table)
		seen = s.sync.appliedCount()
	}
	if werr := s.sync.Wait(ctx, seen); werr != nil {
		return store.Page{}, werr
	}
	if err != nil {
		return store.Page{}, fmt.Errorf("pebblestore: query entities: %w", err)
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

// keyCursor is a Pebble iterator over one table's entity keys, as
// store.ScanPage walks them.
type keyCursor struct {
	it     *pebble.Iterator
	prefix []byte // the table's
	valid  bool
}

func (c *keyCursor) Keys() (pk, rk []byte, ok bool, err error) {
	if !c.valid {
		return nil, nil, false, nil
	}
	pk, rk, err = splitEntityKey(c.it.Key()[len(c.prefix):])
	return pk, rk, err == nil, err
}

func (c *keyCursor) Entity(pk, rk []byte) (*model.Entity, int, error) {
	v := c.it.Value()
	e, err := decodeEntity(pk, rk, string(v))
	return e, len(v), err
}

func (c *keyCursor) Next()      { c.valid = c.it.Next() }
func (c *keyCursor) SeekFirst() { c.valid = c.it.First() }
func (c *keyCursor) Err() error { return c.it.Error() }

// SeekRow seeks the escaped PartitionKey followed by the RowKey bound, a
// zero byte after it when the bound excludes its value (the smallest
// string after it).
func (c *keyCursor) SeekRow(pk []byte, lower *model.Bound) {
	k := appendComponent(bytes.Clone(c.prefix), string(pk))
	if lower != nil {
		k = append(k, lower.Value...)
		if !lower.Inclusive {
			k = append(k, 0)
		}
	}
	c.valid = c.it.SeekGE(k)
}

func (c *keyCursor) SeekPartitionAfter(pk []byte) {
	c.valid = c.it.SeekGE(componentPast(appendComponent(bytes.Clone(c.prefix), string(pk))))
}

// SeekAfter seeks the key plus a zero byte, the smallest key after it
// (the RowKey is the key's raw last part).
func (c *keyCursor) SeekAfter(pk, rk string) {
	c.valid = c.it.SeekGE(append(appendEntityKey(bytes.Clone(c.prefix), pk, rk), 0))
}
