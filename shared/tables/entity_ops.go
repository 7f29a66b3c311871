package tables

import (
	"context"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// InsertEntity stores a new entity decoded from a JSON body and returns it
// with its Timestamp.
func (s *Service) InsertEntity(ctx context.Context, sc Scope, table string, body []byte) (*model.Entity, error) {
	op, err := insertOp(sc, body, s.clock.next())
	if err != nil {
		return nil, err
	}
	if err := s.write(ctx, sc, table, op); err != nil {
		return nil, err
	}
	return op.Entity, nil
}

// insertOp builds an insert stamped with ts.
func insertOp(sc Scope, body []byte, ts time.Time) (store.Op, error) {
	e, err := model.DecodeInsert(body)
	if err != nil {
		return store.Op{}, err
	}
	if !sc.allows(e.PartitionKey, e.RowKey) {
		return store.Op{}, outOfScope()
	}
	e.Timestamp = ts
	return store.Op{Kind: store.OpInsert, Entity: e}, nil
}

// UpdateInput is an Update or Merge Entity request: PUT, or PATCH/MERGE.
type UpdateInput struct {
	Table        string
	PartitionKey string // from the URL
	RowKey       string // from the URL
	Body         []byte
	// IfMatch is the If-Match header: "" (Insert Or Replace / Insert Or
	// Merge), "*" or an ETag.
	IfMatch string
	Merge   bool
}

// UpdateEntity replaces or merges an entity and returns its new Timestamp.
func (s *Service) UpdateEntity(ctx context.Context, sc Scope, in UpdateInput) (time.Time, error) {
	op, err := updateOp(sc, in, s.clock.next())
	if err != nil {
		return time.Time{}, err
	}
	if err := s.write(ctx, sc, in.Table, op); err != nil {
		return time.Time{}, err
	}
	return op.Entity.Timestamp, nil
}

// updateOp builds a replace or merge stamped with ts.
func updateOp(sc Scope, in UpdateInput, ts time.Time) (store.Op, error) {
	// The URL names the entity; model.DecodeUpdate says why keys in the
	// body are not compared with it.
	e, err := model.DecodeUpdate(in.Body, in.PartitionKey, in.RowKey)
	if err != nil {
		return store.Op{}, err
	}
	if !sc.allows(in.PartitionKey, in.RowKey) {
		return store.Op{}, outOfScope()
	}
	e.Timestamp = ts
	op := store.Op{Kind: store.OpReplace, Entity: e}
	if in.Merge {
		op.Kind = store.OpMerge
	}
	if op.Cond, op.Timestamp, err = condition(in.IfMatch); err != nil {
		return store.Op{}, err
	}
	return op, nil
}

// DeleteEntity deletes an entity. ifMatch is required: "*" or an ETag.
func (s *Service) DeleteEntity(ctx context.Context, sc Scope, table, pk, rk, ifMatch string) error {
	op, err := deleteOp(sc, pk, rk, ifMatch)
	if err != nil {
		return err
	}
	return s.write(ctx, sc, table, op)
}

func deleteOp(sc Scope, pk, rk, ifMatch string) (store.Op, error) {
	if err := validateKeys(pk, rk); err != nil {
		return store.Op{}, err
	}
	// "Delete Entity": If-Match is required.
	if ifMatch == "" {
		return store.Op{}, apierr.Newf(apierr.MissingRequiredHeader, "HeaderName: If-Match")
	}
	if !sc.allows(pk, rk) {
		return store.Op{}, outOfScope()
	}
	op := store.Op{Kind: store.OpDelete, Entity: &model.Entity{PartitionKey: pk, RowKey: rk}}
	var err error
	if op.Cond, op.Timestamp, err = condition(ifMatch); err != nil {
		return store.Op{}, err
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
