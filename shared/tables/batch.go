package tables

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// MaxBatchOperations is the most operations one entity group transaction
// holds ("Performing entity group transactions").
const MaxBatchOperations = 100

// BatchKind is what one operation of a transaction does.
type BatchKind uint8

const (
	BatchInsert BatchKind = iota + 1 // POST to the table
	BatchUpdate                      // PUT: Update, or Insert Or Replace without If-Match
	BatchMerge                       // PATCH/MERGE: Merge, or Insert Or Merge without If-Match
	BatchDelete                      // DELETE
)

// BatchOp is one operation of an entity group transaction, as parsed from
// its changeset part.
type BatchOp struct {
	Kind BatchKind
	// PartitionKey and RowKey come from the URL for Update, Merge and
	// Delete; an Insert takes them from its body.
	PartitionKey string
	RowKey       string
	Body         []byte
	IfMatch      string
}

// BatchResult is the outcome of one successful operation.
type BatchResult struct {
	// Entity is the stored entity for an insert (its keys and Timestamp for
	// the others).
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

// Batch runs an entity group transaction on one table: every operation or
// none, through one atomic store.Write.
func (s *Service) Batch(ctx context.Context, sc Scope, table string, ops []BatchOp) ([]BatchResult, error) {
	if len(ops) == 0 {
		return nil, &BatchError{0, apierr.Newf(apierr.InvalidInput, "The batch request contains no operations.")}
	}
	if len(ops) > MaxBatchOperations {
		return nil, &BatchError{0, &apierr.Error{Code: apierr.InvalidInput,
			Message: "The batch request operation exceeds the maximum 100 changes per change set."}}
	}
	if err := tableNameForLookup(table); err != nil {
		return nil, &BatchError{0, err}
	}
	// One Timestamp for the whole transaction: its writes happen at once.
	ts := s.clock.next()
	storeOps := make([]store.Op, len(ops))
	// RowKeys in ascending order, as clients usually send them, cannot
	// repeat within the one partition; only once one is out of order does
	// a set of the RowKeys seen so far take over.
	var seen map[string]bool
	for i, op := range ops {
		var (
			so  store.Op
			err error
		)
		switch op.Kind {
		case BatchInsert:
			so, err = insertOp(sc, op.Body, ts)
		case BatchUpdate, BatchMerge:
			so, err = updateOp(sc, UpdateInput{Table: table, PartitionKey: op.PartitionKey, RowKey: op.RowKey,
				Body: op.Body, IfMatch: op.IfMatch, Merge: op.Kind == BatchMerge}, ts)
		case BatchDelete:
			so, err = deleteOp(sc, op.PartitionKey, op.RowKey, op.IfMatch)
		default:
			err = apierr.Newf(apierr.InvalidInput, "Unsupported operation in the batch.")
		}
		if err != nil {
			return nil, &BatchError{i, err}
		}
		if i > 0 && so.Entity.PartitionKey != storeOps[0].Entity.PartitionKey {
			return nil, &BatchError{i, apierr.New(apierr.CommandsInBatchActOnDifferentPartitions)}
		}
		rk := so.Entity.RowKey
		if seen == nil && i > 0 && storeOps[i-1].Entity.RowKey >= rk {
			seen = make(map[string]bool, len(ops))
			for _, prev := range storeOps[:i] {
				seen[prev.Entity.RowKey] = true
			}
		}
		if seen != nil {
			if seen[rk] {
				return nil, &BatchError{i, apierr.New(apierr.InvalidDuplicateRow)}
			}
			seen[rk] = true
		}
		storeOps[i] = so
	}
	if err := s.store.Write(ctx, sc.Account, table, storeOps); err != nil {
		var oe *store.OpError
		if errors.As(err, &oe) {
			return nil, &BatchError{oe.Index, storeError(oe.Err)}
		}
		return nil, &BatchError{0, storeError(err)}
	}
	results := make([]BatchResult, len(storeOps))
	for i, so := range storeOps {
		results[i] = BatchResult{Entity: so.Entity}
	}
	return results, nil
}
