package record

import (
	"maps"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// tick is the Timestamp's precision (the ETag's 7 fractional digits).
const tick = 100 * time.Nanosecond

// Apply checks one op of a store.Store.Write against the record stored for
// its entity (current, nil when there is none) and returns what the store
// is to keep: the new record, or del for a delete. encoded is the op's
// entity already encoded (EncodeEntity) for an Insert or Replace, which a
// store may do before it takes its write lock; Apply encodes it again only
// when it has to change its Timestamp. The stores on records (bolt, pebble)
// share this, so an op means the same on both.
//
// A Replace or Merge whose Timestamp is not after the stored one (the
// clock stepped back, or another process's clock lags) is stamped 100 ns
// after it instead, in op.Entity.Timestamp, which store.Store.Write hands
// back: Timestamps only increase and no two versions share an ETag. The
// caller must hold its store's write lock, so the stored Timestamp it
// compares with is the latest.
func Apply(op store.Op, current, encoded []byte) (next []byte, del bool, err error) {
	if op.Kind == store.OpInsert {
		if current != nil {
			return nil, false, store.ErrEntityExists
		}
		return encoded, false, nil
	}
	if err := checkCondition(op, current); err != nil {
		return nil, false, err
	}
	if current != nil && op.Kind != store.OpDelete {
		raised, err := raiseTimestamp(op.Entity, current)
		if err != nil {
			return nil, false, err
		}
		if raised && op.Kind == store.OpReplace {
			if encoded, err = EncodeEntity(op.Entity); err != nil {
				return nil, false, err
			}
		}
	}
	switch op.Kind {
	case store.OpReplace:
		return encoded, false, nil
	case store.OpDelete:
		if current == nil {
			// Delete always needs the entity, with or without If-Match.
			return nil, false, store.ErrEntityNotFound
		}
		return nil, true, nil
	}
	// OpMerge: without a stored entity (Insert Or Merge) the sent
	// properties are the whole entity.
	merged := op.Entity
	if current != nil {
		old, err := DecodeEntity(string(current))
		if err != nil {
			return nil, false, err
		}
		merged = &model.Entity{
			PartitionKey: op.Entity.PartitionKey,
			RowKey:       op.Entity.RowKey,
			Timestamp:    op.Entity.Timestamp,
			Properties:   old.Properties,
		}
		maps.Copy(merged.Properties, op.Entity.Properties)
		if err := store.CheckMergedLimits(merged); err != nil {
			return nil, false, err
		}
	}
	next, err = EncodeEntity(merged)
	return next, false, err
}

// raiseTimestamp moves e's new Timestamp just past the stored version's
// when it is not after it.
func raiseTimestamp(e *model.Entity, current []byte) (bool, error) {
	stored, err := DecodeTimestamp(current)
	if err != nil {
		return false, err
	}
	if e.Timestamp.After(stored) {
		return false, nil
	}
	e.Timestamp = stored.Add(tick)
	return true, nil
}

// checkCondition applies an If-Match condition to the stored record (nil
// when absent). CondNone passes: Replace and Merge then upsert, and Delete
// checks existence itself.
func checkCondition(op store.Op, current []byte) error {
	switch op.Cond {
	case store.CondExists:
		if current == nil {
			return store.ErrEntityNotFound
		}
	case store.CondTimestamp:
		if current == nil {
			return store.ErrEntityNotFound
		}
		ts, err := DecodeTimestamp(current)
		if err != nil {
			return err
		}
		if !ts.Equal(op.Timestamp) {
			return store.ErrConditionFailed
		}
	}
	return nil
}
