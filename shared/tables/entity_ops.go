package tables

import (
	"context"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
)

// EntityWrite is one entity write: an operation of shared/operation's
// table that writes an entity (operation.Operation.WritesEntity) and what
// its request carries, whether it comes on its own or in the changeset of
// a batch.
type EntityWrite struct {
	Op operation.Operation
	// PartitionKey and RowKey name the entity in the URL; an insert takes
	// them from its body.
	PartitionKey string
	RowKey       string
	Body         []byte
	// IfMatch is the If-Match header: "*", an ETag, or "".
	IfMatch string
}

// WriteEntity applies one entity write and returns the entity written,
// with its new Timestamp (a delete's carries its keys alone).
func (s *Service) WriteEntity(ctx context.Context, sc Scope, table string, w EntityWrite) (*model.Entity, error) {
	op, err := storeOp(sc, w, s.clock.next())
	if err != nil {
		return nil, err
	}
	if err := s.write(ctx, sc, table, op); err != nil {
		return nil, err
	}
	return op.Entity, nil
}

// entityWrite is what an entity write operation does to a stored entity:
// the kind of store write, and whether If-Match conditions it (and so
// must be there).
type entityWrite struct {
	kind        store.OpKind
	conditional bool
}

// entityWrites is the one place that says what each entity write
// operation means for the store, for a request of its own and an
// operation of a batch alike. Insert Entity adds an entity that must not
// exist; Update and Merge Entity replace or merge the one If-Match names
// ("*" or its ETag), Insert Or Replace and Insert Or Merge Entity whether
// it exists or not; Delete Entity removes the one If-Match names.
var entityWrites = [...]entityWrite{
	operation.InsertEntity:          {kind: store.OpInsert},
	operation.UpdateEntity:          {kind: store.OpReplace, conditional: true},
	operation.MergeEntity:           {kind: store.OpMerge, conditional: true},
	operation.InsertOrReplaceEntity: {kind: store.OpReplace},
	operation.InsertOrMergeEntity:   {kind: store.OpMerge},
	operation.DeleteEntity:          {kind: store.OpDelete, conditional: true},
}

// storeOp builds the store write of an entity write, stamped ts.
func storeOp(sc Scope, w EntityWrite, ts time.Time) (store.Op, error) {
	var how entityWrite
	if int(w.Op) < len(entityWrites) {
		how = entityWrites[w.Op]
	}
	var (
		e   *model.Entity
		err error
	)
	switch how.kind {
	case store.OpInsert:
		e, err = model.DecodeInsert(w.Body)
	case store.OpReplace, store.OpMerge:
		// The URL names the entity; model.DecodeUpdate says why keys in
		// the body are not compared with it.
		e, err = model.DecodeUpdate(w.Body, w.PartitionKey, w.RowKey)
	case store.OpDelete:
		err = validateKeys(w.PartitionKey, w.RowKey)
		e = &model.Entity{PartitionKey: w.PartitionKey, RowKey: w.RowKey}
	default:
		return store.Op{}, apierr.Newf(apierr.InvalidInput, "%s does not write an entity.", w.Op)
	}
	if err != nil {
		return store.Op{}, err
	}
	return how.storeOp(sc, e, w.IfMatch, ts)
}

// storeOp builds the write of e, a valid entity (for a delete, valid
// keys), stamped ts.
func (how entityWrite) storeOp(sc Scope, e *model.Entity, ifMatch string, ts time.Time) (store.Op, error) {
	// "Delete Entity": If-Match is required. Update and Merge Entity are
	// the requests that carry it (operation.Resolve).
	if how.conditional && ifMatch == "" {
		return store.Op{}, apierr.Newf(apierr.MissingRequiredHeader, "HeaderName: If-Match")
	}
	if !sc.allows(e.PartitionKey, e.RowKey) {
		return store.Op{}, outOfScope()
	}
	op := store.Op{Kind: how.kind, Entity: e}
	if how.kind != store.OpDelete {
		e.Timestamp = ts
	}
	if how.conditional {
		var err error
		if op.Cond, op.Timestamp, err = condition(ifMatch); err != nil {
			return store.Op{}, err
		}
	}
	return op, nil
}

// GetEntity returns one entity.
func (s *Service) GetEntity(ctx context.Context, sc Scope, table, pk, rk string) (*model.Entity, error) {
	if err := tableNameForLookup(table); err != nil {
		return nil, err
	}
	if err := validateKeys(pk, rk); err != nil {
		return nil, err
	}
	if !sc.allows(pk, rk) {
		return nil, outOfScope()
	}
	e, err := s.store.GetEntity(ctx, sc.Account, table, pk, rk)
	if err != nil {
		return nil, storeError(err)
	}
	return e, nil
}

func (s *Service) write(ctx context.Context, sc Scope, table string, op store.Op) error {
	if err := tableNameForLookup(table); err != nil {
		return err
	}
	return storeError(s.store.Write(ctx, sc.Account, table, []store.Op{op}))
}

// condition maps an If-Match header to a store condition. Only "*" and weak
// ETags (W/"..." or w/"...", "Specifying conditional headers for Table
// service operations" and RFC 7232's case-insensitive weak indicator) are
// conditions. A weak ETag this service never issued can never match: the
// write fails with 412 UpdateConditionNotSatisfied, as on Azure. Anything
// else, strong ETags and lists of ETags included, is 400 InvalidInput ("The
// etag value '{0}' specified in one of the request headers is not valid").
func condition(ifMatch string) (store.CondKind, time.Time, error) {
	switch ifMatch {
	case "":
		return store.CondNone, time.Time{}, nil
	case "*":
		return store.CondExists, time.Time{}, nil
	}
	if opaque, ok := weakETag(ifMatch); ok {
		if ts, ok := parseETagValue(opaque); ok {
			return store.CondTimestamp, ts, nil
		}
		return store.CondTimestamp, unmatchableTimestamp, nil
	}
	return 0, time.Time{}, &apierr.Error{Code: apierr.InvalidInput,
		Message: "The etag value '" + ifMatch + "' specified in one of the request headers is not valid. Please make sure only one etag value is specified and is valid."}
}

func validateKeys(pk, rk string) error {
	if err := model.ValidateKey(pk, false); err != nil {
		return err
	}
	return model.ValidateKey(rk, true)
}

// outOfScope answers an entity outside a SAS token's key range.
func outOfScope() error {
	return apierr.Newf(apierr.AuthorizationFailure, "The entity is outside the key range of the shared access signature.")
}
