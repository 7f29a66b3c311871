package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/record"
)

// GetEntity returns a copy of one entity.
func (s *Store) GetEntity(ctx context.Context, account, table, partitionKey, rowKey string) (e *model.Entity, err error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave(&err)
	prefix := tablePrefix(account, strings.ToLower(table))
	v, found, err := s.get(appendEntityKey(prefix, partitionKey, rowKey))
	switch {
	case err != nil:
		return nil, fmt.Errorf("pebblestore: get entity: %w", err)
	case found:
		if e, err = decodeEntity([]byte(partitionKey), []byte(rowKey), v); err != nil {
			return nil, fmt.Errorf("pebblestore: get entity: %w", err)
		}
	default:
		// A table's entities go with its catalog entry (Delete Table
		// removes both in one batch), so only a miss needs the catalog.
		if err = s.checkTable(account, table); err == nil {
			err = store.ErrEntityNotFound
		}
	}
	// What was read, found or not, may be a write whose sync is under
	// way.
	if werr := s.sync.Wait(ctx, s.sync.appliedCount()); werr != nil {
		return nil, werr
	}
	return e, err
}

// get returns a copy of the value of k, as a string: what the record
// decoder reads, and one copy out of the engine's memory.
func (s *Store) get(k []byte) (v string, found bool, err error) {
	b, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	v = string(b)
	return v, true, closer.Close()
}

// plannedOp is one op of a Write with what does not depend on the stored
// data computed before the write lock: its key and, for an Insert or
// Replace, its record.
type plannedOp struct {
	store.Op
	key   []byte
	value []byte
}

// Write applies ops atomically: one batch, in the log with one sync.
func (s *Store) Write(ctx context.Context, account, table string, ops []store.Op) (err error) {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave(&err)
	plan, err := planWrite(tablePrefix(account, strings.ToLower(table)), ops)
	if err != nil || len(plan) == 0 {
		return err
	}
	return s.commit(ctx, func() (*pebble.Batch, error) {
		if err := s.checkTable(account, table); err != nil {
			return nil, err
		}
		b := s.db.NewBatch()
		for i, p := range plan {
			current, closer, err := s.db.Get(p.key)
			switch {
			case errors.Is(err, pebble.ErrNotFound):
				current, closer = nil, io.NopCloser(nil)
			case err != nil:
				b.Close()
				return nil, fmt.Errorf("pebblestore: write: %w", err)
			}
			next, del, err := record.Apply(p.Op, current, p.value)
			closer.Close()
			if err != nil {
				b.Close()
				return nil, &store.OpError{Index: i, Err: err}
			}
			if del {
				err = b.Delete(p.key, nil)
			} else {
				err = b.Set(p.key, next, nil)
			}
			if err != nil {
				b.Close()
				return nil, fmt.Errorf("pebblestore: write: %w", err)
			}
		}
		return b, nil
	}, nil)
}

// planWrite checks the ops' shape and computes their keys and records. The
// keys share one allocation and the records another.
func planWrite(prefix []byte, ops []store.Op) ([]plannedOp, error) {
	plan := make([]plannedOp, len(ops))
	keysLen := 0
	for _, op := range ops {
		if op.Entity != nil {
			keysLen += len(prefix) + len(op.Entity.PartitionKey) + 2 + len(op.Entity.RowKey)
		}
	}
	keys := make([]byte, 0, keysLen)
	var values []byte
	valueEnds := make([]int, len(ops))
	var seen map[string]int
	for i, op := range ops {
		if err := op.Check(); err != nil {
			return nil, &store.OpError{Index: i, Err: err}
		}
		if op.Kind == store.OpInsert || op.Kind == store.OpReplace {
			var err error
			if values, err = record.AppendEntity(values, op.Entity); err != nil {
				return nil, &store.OpError{Index: i, Err: err}
			}
			valueEnds[i] = len(values)
		}
		start := len(keys)
		keys = append(keys, prefix...)
		keys = appendEntityKey(keys, op.Entity.PartitionKey, op.Entity.RowKey)
		key := keys[start:len(keys):len(keys)]
		if len(ops) > 1 {
			if seen == nil {
				seen = make(map[string]int, len(ops))
			}
			if j, dup := seen[string(key)]; dup {
				return nil, &store.OpError{Index: i, Err: fmt.Errorf("pebblestore: op %d and op %d name the same entity", j, i)}
			}
			seen[string(key)] = i
		}
		plan[i] = plannedOp{Op: op, key: key}
	}
	// values has its final backing array only now.
	start := 0
	for i, end := range valueEnds {
		if end > 0 {
			plan[i].value = values[start:end:end]
			start = end
		}
	}
	return plan, nil
}

// decodeEntity decodes a stored record into an entity with the keys pk and
// rk, sharing no memory with them: one conversion copies both keys.
func decodeEntity(pk, rk []byte, rec string) (*model.Entity, error) {
	e, err := record.DecodeEntity(rec)
	if err != nil {
		return nil, err
	}
	if len(pk)+len(rk) > 0 {
		keys := string(pk) + string(rk)
		e.PartitionKey, e.RowKey = keys[:len(pk)], keys[len(pk):]
	}
	return e, nil
}
