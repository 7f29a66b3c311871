package tables

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// BatchResult is the outcome of one successful operation.
type BatchResult struct {
	// Entity is the entity written, with the transaction's Timestamp (a
	// delete's carries its keys alone).
	Entity *model.Entity
}

// BatchError is a failed transaction: the 0-based index of the operation
// that failed and its error. Azure's response message starts with the index.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("%d:%v", e.Index, e.Err) }
func (e *BatchError) Unwrap() error { return e.Err }

// APIError returns the operation's Azure error.
func (e *BatchError) APIError() *apierr.Error {
	if ae, ok := apierr.As(e.Err); ok {
		return ae
	}
	return apierr.Wrap(apierr.InternalError, e.Err)
}

// Batch runs an entity group transaction on one table: every entity write
// or none, through one atomic store.Write.
func (s *Service) Batch(ctx context.Context, sc Scope, table string, writes []EntityWrite) ([]BatchResult, error) {
	if err := checkTransaction(len(writes), table); err != nil {
		return nil, err
	}
	// One Timestamp for the whole transaction: its writes happen at once.
	ts := s.clock.next()
	storeOps := make([]store.Op, len(writes))
	var keys transactionKeys
	for i, w := range writes {
		so, err := storeOp(sc, w, ts)
		if err != nil {
			return nil, &BatchError{i, err}
		}
		storeOps[i] = so
		if err := keys.check(storeOps[:i+1]); err != nil {
			return nil, err
		}
	}
	if err := s.writeTransaction(ctx, sc, table, storeOps); err != nil {
		return nil, err
	}
	results := make([]BatchResult, len(storeOps))
	for i, so := range storeOps {
		results[i] = BatchResult{Entity: so.Entity}
	}
	return results, nil
}

// checkTransaction refuses what makes any transaction of n operations on
// table invalid: no operations, more than 100, or a name no table has.
func checkTransaction(n int, table string) error {
	if n == 0 {
		return &BatchError{0, apierr.Newf(apierr.InvalidInput, "The batch request contains no operations.")}
	}
	if err := model.ValidateBatchSize(n); err != nil {
		return &BatchError{0, err}
	}
	if err := tableNameForLookup(table); err != nil {
		return &BatchError{0, err}
	}
	return nil
}

// transactionKeys checks that the operations of a transaction act on one
// partition and no entity twice. RowKeys in ascending order, as clients
// usually send them, cannot repeat; only once one is out of order does a
// set of the RowKeys seen so far take over.
type transactionKeys struct{ seen map[string]bool }

// check checks the last of ops against the ones before it.
func (k *transactionKeys) check(ops []store.Op) error {
	i := len(ops) - 1
	e := ops[i].Entity
	if i > 0 && e.PartitionKey != ops[0].Entity.PartitionKey {
		return &BatchError{i, apierr.New(apierr.CommandsInBatchActOnDifferentPartitions)}
	}
	if k.seen == nil && i > 0 && ops[i-1].Entity.RowKey >= e.RowKey {
		k.seen = make(map[string]bool, cap(ops))
		for _, prev := range ops[:i] {
			k.seen[prev.Entity.RowKey] = true
		}
	}
	if k.seen != nil {
		if k.seen[e.RowKey] {
			return &BatchError{i, apierr.New(apierr.InvalidDuplicateRow)}
		}
		k.seen[e.RowKey] = true
	}
	return nil
}

// writeTransaction is a transaction's one atomic store.Write; a failure
// names the operation that failed.
func (s *Service) writeTransaction(ctx context.Context, sc Scope, table string, ops []store.Op) error {
	err := s.store.Write(ctx, sc.Account, table, ops)
	if err == nil {
		return nil
	}
	var oe *store.OpError
	if errors.As(err, &oe) {
		return &BatchError{oe.Index, storeError(oe.Err)}
	}
	return &BatchError{0, storeError(err)}
}
