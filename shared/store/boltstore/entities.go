package boltstore

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	bolt "go.etcd.io/bbolt"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/record"
)

// GetEntity returns a copy of one entity.
func (s *Store) GetEntity(ctx context.Context, account, table, partitionKey, rowKey string) (*model.Entity, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	var e *model.Entity
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := entityBucket(tx, account, table)
		if b == nil {
			return fmt.Errorf("%q: %w", table, store.ErrTableNotFound)
		}
		if strings.IndexByte(partitionKey, keySeparator) >= 0 {
			// No such entity can have been stored (Write refuses it).
			return store.ErrEntityNotFound
		}
		v := b.Get(entityKey(partitionKey, rowKey))
		if v == nil {
			return store.ErrEntityNotFound
		}
		var err error
		e, err = decodeEntity([]byte(partitionKey), []byte(rowKey), v)
		return err
	})
	if err != nil {
		return nil, wrapErr("get entity", err)
	}
	return e, nil
}

// plannedOp is one op of a Write with everything that does not depend on the
// stored data computed up front, outside the write lock.
type plannedOp struct {
	store.Op
	key   []byte
	value []byte // encoded entity for Insert and Replace
}

// mutation is one checked change, ready to apply.
type mutation struct {
	key    []byte
	value  []byte // the encoded entity to put, unless delete
	delete bool
}

// Write applies ops atomically in one group-committed transaction.
func (s *Store) Write(ctx context.Context, account, table string, ops []store.Op) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	plan, err := planWrite(ops)
	if err != nil {
		return err
	}
	if len(plan) == 0 {
		return nil
	}
	// The committer runs this function inside a transaction shared with
	// other writers, and runs it again if another function of the group
	// fails. So it must be idempotent: it resets its result, checks every op
	// before it changes anything, and reports a failed check through result
	// while returning nil, which lets the group commit the other writers'
	// work. It returns an error only for a bbolt failure, after which the
	// shared transaction rolls back and the others are committed without it.
	var result error
	err = s.commits.do(ctx, func(tx *bolt.Tx) error {
		result = nil
		b := entityBucket(tx, account, table)
		if b == nil {
			result = fmt.Errorf("boltstore: write: %q: %w", table, store.ErrTableNotFound)
			return nil
		}
		muts, err := checkOps(b, plan)
		if err != nil {
			result = err
			return nil
		}
		for _, m := range muts {
			if m.delete {
				err = b.Delete(m.key)
			} else {
				err = b.Put(m.key, m.value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return wrapErr("write", err)
	}
	return result
}

// planWrite validates the ops' shape and encodes what it can before the
// transaction. The keys share one allocation and the encoded entities
// another (bbolt keeps a value until the commit, so a value must not be
// reused, but it need not have a buffer of its own), so a batch's
// allocations here do not grow with its size (figures: docs/performance.md).
func planWrite(ops []store.Op) ([]plannedOp, error) {
	plan := make([]plannedOp, len(ops))
	// Keys in ascending order, as a batch usually names them, cannot
	// repeat; only once one is out of order does a set of the keys seen
	// so far take over (a set from the start cost an allocation per key).
	var seen map[string]int
	keysLen := 0
	for _, op := range ops {
		if op.Entity != nil {
			keysLen += len(op.Entity.PartitionKey) + 1 + len(op.Entity.RowKey)
		}
	}
	keys := make([]byte, 0, keysLen)
	var values []byte
	valueEnds := make([]int, len(ops)) // end of op i's value in values, if it has one
	for i, op := range ops {
		if err := op.Check(); err != nil {
			return nil, &store.OpError{Index: i, Err: err}
		}
		pk, rk := op.Entity.PartitionKey, op.Entity.RowKey
		if strings.IndexByte(pk, keySeparator) >= 0 {
			// Azure forbids control characters in keys; the service rejects
			// them before they get here.
			return nil, &store.OpError{Index: i, Err: fmt.Errorf("boltstore: PartitionKey %q contains U+0000", pk)}
		}
		start := len(keys)
		keys = appendEntityKey(keys, pk, rk)
		key := keys[start:len(keys):len(keys)]
		if len(key) > bolt.MaxKeySize {
			return nil, &store.OpError{Index: i, Err: fmt.Errorf("boltstore: keys of %d bytes: %w", len(key), store.ErrKeyTooLong)}
		}
		if seen == nil && i > 0 && bytes.Compare(plan[i-1].key, key) >= 0 {
			seen = make(map[string]int, len(ops))
			for j := range i {
				seen[string(plan[j].key)] = j
			}
		}
		if seen != nil {
			if j, dup := seen[string(key)]; dup {
				return nil, &store.OpError{Index: i, Err: fmt.Errorf("boltstore: op %d and op %d name the same entity", j, i)}
			}
			seen[string(key)] = i
		}
		p := plannedOp{Op: op, key: key}
		if op.Kind == store.OpInsert || op.Kind == store.OpReplace {
			if values == nil {
				// Room for every op's entity if they are all the size
				// of this one; append grows it when they are larger.
				first, err := record.EncodeEntity(op.Entity)
				if err != nil {
					return nil, &store.OpError{Index: i, Err: err}
				}
				values = append(make([]byte, 0, len(first)*(len(ops)-i)), first...)
			} else {
				var err error
				if values, err = record.AppendEntity(values, op.Entity); err != nil {
					return nil, &store.OpError{Index: i, Err: err}
				}
			}
			valueEnds[i] = len(values)
		}
		plan[i] = p
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

// checkOps checks every op against the bucket without changing it and
// returns the mutations to apply, or the *store.OpError of the first op that
// fails. Ops name distinct entities, so checking all against the state
// before any of them applies is the same as checking each in turn.
func checkOps(b *bolt.Bucket, plan []plannedOp) ([]mutation, error) {
	muts := make([]mutation, len(plan))
	stored := storedValues{c: b.Cursor()}
	for i, p := range plan {
		m, err := checkOp(stored.get(p.key), p)
		if err != nil {
			return nil, &store.OpError{Index: i, Err: err}
		}
		muts[i] = m
	}
	return muts, nil
}

// storedValues looks keys up with one cursor. Where Bucket.Get seeks from
// the root for every key, it answers a key that lies between the last key
// it sought and the stored key its cursor rests on without moving: a batch
// that inserts ascending keys into an empty range (the SDKs' usual
// transaction) costs one seek instead of one per entity. The bucket must
// not change while it is in use.
type storedValues struct {
	c *bolt.Cursor
	// sought is the last key sought, and k, v the first stored entry at or
	// after it (k nil past the last one); valid once a seek has happened.
	sought, k, v []byte
	valid        bool
}

// get returns the value stored under key, or nil (as Bucket.Get does, also
// for a nested bucket's key, which entity buckets never hold).
func (s *storedValues) get(key []byte) []byte {
	// No stored key lies in [sought, k), so for a key in [sought, k] the
	// first stored key at or after it is still k.
	if !s.valid || bytes.Compare(key, s.sought) < 0 || s.k != nil && bytes.Compare(key, s.k) > 0 {
		s.k, s.v = s.c.Seek(key)
		s.sought, s.valid = key, true
	}
	if s.k != nil && bytes.Equal(s.k, key) {
		return s.v
	}
	return nil
}

// checkOp checks one planned op against the stored value (nil when
// absent) with the rules every store on records shares (record.Apply).
func checkOp(current []byte, p plannedOp) (mutation, error) {
	v, del, err := record.Apply(p.Op, current, p.value)
	if err != nil {
		return mutation{}, err
	}
	return mutation{key: p.key, value: v, delete: del}, nil
}
