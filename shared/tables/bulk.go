package tables

import (
	"context"
	"errors"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// ReplaceEntities is an entity group transaction of Insert Or Replace
// Entity operations for entities already decoded: the bulk path of
// migrations and imports, which hold model.Entity values rather than
// request bodies. The rules are those of Batch: at most 100 entities of one
// partition, no key twice, each entity valid as a request's would be, one
// new Timestamp for all. The entities passed are not modified. A failure is
// a *BatchError naming the entity.
func (s *Service) ReplaceEntities(ctx context.Context, sc Scope, table string, entities []*model.Entity) error {
	if len(entities) == 0 {
		return &BatchError{0, apierr.Newf(apierr.InvalidInput, "The batch request contains no operations.")}
	}
	if len(entities) > MaxBatchOperations {
		return &BatchError{0, &apierr.Error{Code: apierr.InvalidInput,
			Message: "The batch request operation exceeds the maximum 100 changes per change set."}}
	}
	if err := tableNameForLookup(table); err != nil {
		return &BatchError{0, err}
	}
	ts := s.clock.next()
	stored := make([]model.Entity, len(entities))
	ops := make([]store.Op, len(entities))
	seen := make(map[string]bool, len(entities))
	for i, e := range entities {
		if err := model.ValidateEntity(e); err != nil {
			return &BatchError{i, err}
		}
		if sc.EntityAllowed != nil && !sc.EntityAllowed(e.PartitionKey, e.RowKey) {
			return &BatchError{i, outOfScope()}
		}
		if e.PartitionKey != entities[0].PartitionKey {
			return &BatchError{i, apierr.New(apierr.CommandsInBatchActOnDifferentPartitions)}
		}
		if seen[e.RowKey] {
			return &BatchError{i, apierr.New(apierr.InvalidDuplicateRow)}
		}
		seen[e.RowKey] = true
		// The store keeps the entity it is given: a copy leaves the
		// caller's Timestamp alone.
		stored[i] = *e
		stored[i].Timestamp = ts
		ops[i] = store.Op{Kind: store.OpReplace, Cond: store.CondNone, Entity: &stored[i]}
	}
	if err := s.store.Write(ctx, sc.Account, table, ops); err != nil {
		var oe *store.OpError
		if errors.As(err, &oe) {
			return &BatchError{oe.Index, storeError(oe.Err)}
		}
		return &BatchError{0, storeError(err)}
	}
	return nil
}
