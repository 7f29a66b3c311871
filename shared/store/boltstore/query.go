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

// QueryEntities returns one page of a query.
func (s *Store) QueryEntities(ctx context.Context, account, table string, q store.Query) (store.Page, error) {
	if err := s.enter(ctx); err != nil {
		return store.Page{}, err
	}
	defer s.leave()
	var page store.Page
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := entityBucket(tx, account, table)
		if b == nil {
			return fmt.Errorf("%q: %w", table, store.ErrTableNotFound)
		}
		c := &keyCursor{c: b.Cursor()}
		var err error
		page, err = store.ScanPage(ctx, c, q, store.ScanBudget{Rows: s.scanRows, Deadline: time.Now().Add(s.scanTime)})
		return err
	})
	if err != nil {
		return store.Page{}, wrapErr("query entities", err)
	}
	return page, nil
}

// keyCursor is a bbolt cursor over a table's entity bucket, as
// store.ScanPage walks it. Its keys and values are valid for the
// transaction.
type keyCursor struct {
	c    *bolt.Cursor
	k, v []byte // nil past the end
}

func (c *keyCursor) Keys() (pk, rk []byte, ok bool, err error) {
	if c.k == nil {
		return nil, nil, false, nil
	}
	pk, rk, err = splitKey(c.k)
	return pk, rk, err == nil, err
}

func (c *keyCursor) Entity(pk, rk []byte) (*model.Entity, int, error) {
	e, err := decodeEntity(pk, rk, c.v)
	return e, len(c.v), err
}

func (c *keyCursor) Next()      { c.k, c.v = c.c.Next() }
func (c *keyCursor) SeekFirst() { c.k, c.v = c.c.First() }
func (c *keyCursor) Err() error { return nil }

// SeekRow seeks pk\x00 followed by the RowKey bound, a zero byte after it
// when the bound excludes its value (the smallest string after it).
func (c *keyCursor) SeekRow(pk []byte, lower *model.Bound) {
	k := append(append(bytes.Clone(pk), keySeparator), lowerValue(lower)...)
	if lower != nil && !lower.Inclusive {
		k = append(k, 0)
	}
	c.k, c.v = c.c.Seek(k)
}

// SeekPartitionAfter seeks pk\x01: every key of pk starts with pk\x00,
// and any greater PartitionKey is at least pk\x01 since PartitionKeys hold
// no zero byte.
func (c *keyCursor) SeekPartitionAfter(pk []byte) {
	c.k, c.v = c.c.Seek(append(bytes.Clone(pk), keySeparator+1))
}

// SeekAfter seeks the key plus a zero byte, the smallest key after it.
func (c *keyCursor) SeekAfter(pk, rk string) {
	c.k, c.v = c.c.Seek(append(entityKey(pk, rk), 0))
}

func lowerValue(b *model.Bound) string {
	if b == nil {
		return ""
	}
	return b.Value
}
