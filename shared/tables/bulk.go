package tables

import (
	"context"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
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
	return s.replaceEntities(ctx, sc, table, entities, false)
}

// RestoreEntities is ReplaceEntities keeping each entity's own Timestamp:
// the copy of a tablebridge store into another (tablebridge migrate
// between local stores), where the Timestamps, and so the ETags clients
// hold, belong to the data. Into a table that does not hold the entities
// yet they are stored with exactly these Timestamps; over a stored
// version, the store moves a Timestamp that is not after it just past it,
// as for any write.
func (s *Service) RestoreEntities(ctx context.Context, sc Scope, table string, entities []*model.Entity) error {
	for i, e := range entities {
		if e != nil && e.Timestamp.IsZero() {
			return &BatchError{i, apierr.Newf(apierr.InvalidInput, "An entity to restore has no Timestamp.")}
		}
	}
	return s.replaceEntities(ctx, sc, table, entities, true)
}

func (s *Service) replaceEntities(ctx context.Context, sc Scope, table string, entities []*model.Entity, keepTimestamps bool) error {
	if err := checkTransaction(len(entities), table); err != nil {
		return err
	}
	ts := s.clock.next()
	stored := make([]model.Entity, len(entities))
	ops := make([]store.Op, len(entities))
	replace := entityWrites[operation.InsertOrReplaceEntity]
	var keys transactionKeys
	for i, e := range entities {
		if err := model.ValidateEntity(e); err != nil {
			return &BatchError{i, err}
		}
		// The store keeps the entity it is given: a copy leaves the
		// caller's Timestamp alone.
		stored[i] = *e
		at := ts
		if keepTimestamps {
			at = e.Timestamp
		}
		op, err := replace.storeOp(sc, &stored[i], "", at)
		if err != nil {
			return &BatchError{i, err}
		}
		ops[i] = op
		if err := keys.check(ops[:i+1]); err != nil {
			return err
		}
	}
	return s.writeTransaction(ctx, sc, table, ops)
}
