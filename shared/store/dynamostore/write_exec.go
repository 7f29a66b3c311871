package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// failure is why one op of an attempt did not apply.
type failure struct {
	op  int
	old item // the stored main item a condition saw (ALL_OLD); nil: none stored
	// tooLarge: a merge's UpdateItem would outgrow one DynamoDB item.
	tooLarge bool
	// conflict: another transaction held one of the op's items.
	conflict bool
}

// writeOne runs a single action as PutItem, UpdateItem or DeleteItem.
func (s *Store) writeOne(ctx context.Context, a types.TransactWriteItem, owner int) ([]failure, error) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	var attempts writeAttempts
	var err error
	switch {
	case a.Put != nil:
		_, err = s.db.PutItem(cctx, &dynamodb.PutItemInput{
			TableName:                           a.Put.TableName,
			Item:                                a.Put.Item,
			ConditionExpression:                 a.Put.ConditionExpression,
			ExpressionAttributeNames:            a.Put.ExpressionAttributeNames,
			ExpressionAttributeValues:           a.Put.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: a.Put.ReturnValuesOnConditionCheckFailure,
		}, attempts.single)
	case a.Update != nil:
		_, err = s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
			TableName:                           a.Update.TableName,
			Key:                                 a.Update.Key,
			UpdateExpression:                    a.Update.UpdateExpression,
			ConditionExpression:                 a.Update.ConditionExpression,
			ExpressionAttributeNames:            a.Update.ExpressionAttributeNames,
			ExpressionAttributeValues:           a.Update.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailure(a.Update.ReturnValuesOnConditionCheckFailure),
		}, attempts.single)
	case a.Delete != nil:
		_, err = s.db.DeleteItem(cctx, &dynamodb.DeleteItemInput{
			TableName:                           a.Delete.TableName,
			Key:                                 a.Delete.Key,
			ConditionExpression:                 a.Delete.ConditionExpression,
			ExpressionAttributeNames:            a.Delete.ExpressionAttributeNames,
			ExpressionAttributeValues:           a.Delete.ExpressionAttributeValues,
			ReturnValuesOnConditionCheckFailure: a.Delete.ReturnValuesOnConditionCheckFailure,
		}, attempts.single)
	}
	if err == nil {
		return nil, nil
	}
	if old, ok := isConditionFailed(err); ok {
		return []failure{{op: owner, old: old}}, nil
	}
	if a.Update != nil && isItemTooLarge(err) {
		return []failure{{op: owner, tooLarge: true}}, nil
	}
	if isTransactionConflict(err) && !attempts.maybeSent.Load() {
		return []failure{{op: owner, conflict: true}}, nil
	}
	return nil, mapWriteErr("write entity", err, attempts.maybeSent.Load())
}

// isItemTooLarge recognizes DynamoDB's answers to an update too large for
// one request or item: "Item size to update has exceeded the maximum allowed
// size", "Expression size has exceeded the maximum allowed size".
func isItemTooLarge(err error) bool {
	return hasUnmodeledCode(err, "ValidationException") && strings.Contains(strings.ToLower(err.Error()), "has exceeded the maximum allowed size")
}

// writeTransaction runs the actions as one TransactWriteItems and reports
// which ops' conditions failed, from the CancellationReasons (one per action,
// in order).
func (s *Store) writeTransaction(ctx context.Context, actions []types.TransactWriteItem, owners []int) ([]failure, error) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	var attempts writeAttempts
	_, err := s.db.TransactWriteItems(cctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}, attempts.transaction)
	if err == nil {
		return nil, nil
	}
	maybeSent := attempts.maybeSent.Load()
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		if isTransactionConflict(err) && !maybeSent {
			return []failure{{op: owners[0], conflict: true}}, nil
		}
		return nil, mapWriteErr("write entities", err, maybeSent)
	}
	if maybeSent && !cancelledByConditions(tce) {
		// An earlier attempt may have been applied (its answer lost) or
		// may still run: retrying as a new transaction could apply the
		// ops twice, or a late first attempt overwrite a newer write.
		return nil, mapWriteErr("write entities", err, true)
	}
	byOp := map[int]failure{}
	for j, r := range tce.CancellationReasons {
		if j >= len(owners) {
			break
		}
		f := failure{op: owners[j]}
		switch code := aws.ToString(r.Code); code {
		case "", "None":
			continue
		case "ConditionalCheckFailed":
			f.old = r.Item
		case "TransactionConflict":
			f.conflict = true
		case "ValidationError":
			if actions[j].Update == nil {
				return nil, fmt.Errorf("dynamostore: write entities: action %d rejected: %s", j, aws.ToString(r.Message))
			}
			f.tooLarge = true
		case "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded":
			return nil, fmt.Errorf("dynamostore: write entities: DynamoDB throttled the transaction (%s): %w", code, store.ErrBusy)
		default:
			return nil, fmt.Errorf("dynamostore: write entities: transaction canceled (%s: %s)", code, aws.ToString(r.Message))
		}
		// A condition or size failure of an op's main action says more than
		// a conflict on one of its overflow items.
		if prev, ok := byOp[f.op]; !ok || prev.conflict {
			byOp[f.op] = f
		}
	}
	if len(byOp) == 0 {
		return nil, fmt.Errorf("dynamostore: write entities: transaction canceled without a reason: %w", err)
	}
	return slices.Collect(maps.Values(byOp)), nil
}

// resolve learns from a failed attempt. It returns the op's definitive error
// (ErrEntityExists, ErrEntityNotFound, ErrConditionFailed, or a merge result
// over the limits), or nil after recording the stored version so that the
// next attempt rewrites the entity conditioned on it.
func (s *Store) resolve(ctx context.Context, loc *location, p *plan, f failure) error {
	op := p.op
	if op.Kind == store.OpInsert {
		if f.old != nil || !f.tooLarge {
			return fmt.Errorf("dynamostore: entity (%q, %q): %w", op.Entity.PartitionKey, op.Entity.RowKey, store.ErrEntityExists)
		}
	}
	main, chunks := f.old, []item(nil)
	var err error
	switch {
	case f.tooLarge:
		main, chunks, err = s.readItems(ctx, loc, p.pk, p.rk)
	case main != nil && op.Kind == store.OpMerge && metaOf(main).chunks >= 0:
		main, chunks, err = s.readChunked(ctx, loc, p.pk, p.rk, metaOf(main).chunks)
	}
	if err != nil {
		return err
	}
	if main == nil {
		if needsExisting(op) {
			return fmt.Errorf("dynamostore: entity (%q, %q): %w", op.Entity.PartitionKey, op.Entity.RowKey, store.ErrEntityNotFound)
		}
		p.known = &storedVersion{exists: false}
	} else {
		meta := metaOf(main)
		if op.Cond == store.CondTimestamp && meta.timestamp != formatTime(op.Timestamp) {
			return fmt.Errorf("dynamostore: entity (%q, %q) has Timestamp %s: %w", op.Entity.PartitionKey, op.Entity.RowKey, meta.timestamp, store.ErrConditionFailed)
		}
		p.known = &storedVersion{exists: true, meta: meta}
		if op.Kind == store.OpMerge {
			if p.known.entity, err = decodeItems(loc, main, chunks); err != nil {
				return err
			}
		}
	}
	if op.Kind == store.OpMerge {
		merged := mergeInto(p.known.entity, op.Entity)
		if err := store.CheckMergedLimits(merged); err != nil {
			return err
		}
		if p.items, err = buildItems(loc, merged); err != nil {
			return err
		}
	}
	return nil
}

// mergeInto returns stored with patch's properties and Timestamp; stored may
// be nil (an upsert of a missing entity).
func mergeInto(stored, patch *model.Entity) *model.Entity {
	if stored == nil {
		return patch
	}
	merged := *stored
	merged.Properties = maps.Clone(stored.Properties)
	maps.Copy(merged.Properties, patch.Properties)
	merged.Timestamp = patch.Timestamp
	return &merged
}
