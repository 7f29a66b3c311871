package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// A table's life in the catalog:
//
//	(none) --claim--> creating --ACTIVE--> active --DeleteTable--> deleting --> (none)
//
// CreateTable claims the name with a conditional PutItem, so of two racing
// creates exactly one wins; it then creates the DynamoDB table, waits until
// it is ACTIVE and marks the item active. DeleteTable marks the item
// deleting, deletes the DynamoDB table and removes the item. While DynamoDB
// still drops the old table, its CreateTable answers ResourceInUseException
// and the new create fails with ErrTableBeingDeleted, as Azure answers 409
// TableBeingDeleted for about 40 s after a delete.
//
// A crash between the steps leaves a creating or deleting item behind. The
// next CreateTable of that name finishes the job: it resumes a delete, and
// takes over a creating item older than staleCreate.

// staleCreate is how long a creating item may wait for its DynamoDB table
// before another CreateTable takes it over.
func (s *Store) staleCreate() time.Duration { return s.opts.TableWaitTimeout + time.Minute }

// CreateTable creates the DynamoDB table of an Azure table: hash key
// PartitionKey, range key RowKey, both strings, on-demand capacity.
// With a shared table, the table goes there instead (createShared).
func (s *Store) CreateTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	if s.opts.SharedTable != "" {
		return s.createShared(ctx, account, table, nil)
	}
	phys, err := s.physicalName(account, table)
	if err != nil {
		return store.TableInfo{}, err
	}
	marker := newGen()
	for attempt := 0; attempt < 3; attempt++ {
		claimed, adopted, err := s.claimTable(ctx, account, table, phys, marker)
		if err != nil {
			return store.TableInfo{}, err
		}
		if adopted != "" {
			// A create that gave up half way, finished now (halfcreated.go).
			return store.TableInfo{Name: adopted}, nil
		}
		if !claimed {
			continue // a finished delete freed the name; claim again
		}
		if err := s.createPhysical(ctx, account, table, phys, marker); err != nil {
			return store.TableInfo{}, err
		}
		return store.TableInfo{Name: table}, nil
	}
	return store.TableInfo{}, fmt.Errorf("dynamostore: create table %q: the name keeps changing state: %w", table, store.ErrBusy)
}

// claimTable writes the creating item. It returns false when the name was
// held by a finished delete that it cleaned up, so the caller claims again,
// and the table's name when it adopted and finished an abandoned create.
func (s *Store) claimTable(ctx context.Context, account, table, phys, marker string) (bool, string, error) {
	it := tableKey(account, table)
	it[catName] = &types.AttributeValueMemberS{Value: table}
	it[catState] = &types.AttributeValueMemberS{Value: stateCreating}
	it[catPhysical] = &types.AttributeValueMemberS{Value: phys}
	it[catMarker] = &types.AttributeValueMemberS{Value: marker}
	it[catSince] = &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339Nano)}
	cctx, cancel := s.call(ctx)
	_, err := s.db.PutItem(cctx, &dynamodb.PutItemInput{
		TableName:                           aws.String(s.opts.CatalogTable),
		Item:                                it,
		ConditionExpression:                 aws.String("attribute_not_exists(#k)"),
		ExpressionAttributeNames:            map[string]string{"#k": catKey},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	cancel()
	if err == nil {
		return true, "", nil
	}
	old, ok := isConditionFailed(err)
	if !ok {
		return false, "", s.catalogErr(ctx, "create table", err)
	}
	if stringAttr(old, catMarker) == marker {
		// Our own claim: an attempt whose answer was lost applied it,
		// and the client's retry met it.
		return true, "", nil
	}
	switch stringAttr(old, catState) {
	case stateDeleting:
		return false, "", s.resumeDelete(ctx, account, table, old)
	case stateCreating:
		if stringAttr(old, catAbandoned) != "" {
			done, err := s.adoptClaim(ctx, account, table, old)
			if err != nil {
				return false, "", err
			}
			if done {
				return false, stringAttr(old, catName), nil
			}
		}
		since, _ := time.Parse(time.RFC3339Nano, stringAttr(old, catSince))
		if time.Since(since) < s.staleCreate() {
			return false, "", fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableExists)
		}
		claimed, err := s.takeOver(ctx, account, table, phys, marker, stringAttr(old, catMarker))
		return claimed, "", err
	}
	return false, "", fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableExists)
}

// takeOver claims a creating item whose creator vanished.
func (s *Store) takeOver(ctx context.Context, account, table, phys, marker, oldMarker string) (bool, error) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.opts.CatalogTable),
		Key:                      tableKey(account, table),
		UpdateExpression:         aws.String("SET #n = :n, #p = :p, #m = :m, #t = :t"),
		ConditionExpression:      aws.String("#s = :creating AND #m = :old"),
		ExpressionAttributeNames: map[string]string{"#n": catName, "#p": catPhysical, "#m": catMarker, "#t": catSince, "#s": catState},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":n":        &types.AttributeValueMemberS{Value: table},
			":p":        &types.AttributeValueMemberS{Value: phys},
			":m":        &types.AttributeValueMemberS{Value: marker},
			":t":        &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339Nano)},
			":creating": &types.AttributeValueMemberS{Value: stateCreating},
			":old":      &types.AttributeValueMemberS{Value: oldMarker},
		},
	})
	if _, ok := isConditionFailed(err); ok {
		return false, fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableExists)
	}
	if err != nil {
		return false, s.catalogErr(ctx, "create table", err)
	}
	return true, nil
}

// createPhysical creates and waits for the DynamoDB table of a claimed name,
// then marks the catalog item active.
func (s *Store) createPhysical(ctx context.Context, account, table, phys, marker string) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		cctx, cancel := s.call(ctx)
		in := s.entityTableInput(phys)
		s.protectInput(in, account, table)
		_, err = s.db.CreateTable(cctx, in)
		cancel()
		if err == nil || !isTableInUse(err) {
			break
		}
		// The DynamoDB table exists: still being deleted, or left by a
		// create that crashed before marking its item active. Nothing
		// writes to a table whose catalog item is not active except a
		// client racing its own delete, so adopting it is safe.
		status, derr := s.tableStatus(ctx, phys)
		if derr != nil {
			err = derr
			break
		}
		if status == types.TableStatusDeleting {
			s.releaseClaim(ctx, account, table, marker)
			return fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableBeingDeleted)
		}
		if status != "" {
			err = nil // adopt it
			break
		}
		// Gone between the two calls: create it again.
	}
	if err != nil {
		s.releaseClaim(ctx, account, table, marker)
		return mapErr("create table "+phys, err)
	}
	// A table of this name deleted earlier may have been found without the
	// order index; this one has it unless the layout is unordered.
	s.noIndex.Delete(phys)
	s.indexSeen.Delete(phys)
	if err := s.waitActive(ctx, phys); err != nil {
		// Leave the claim, abandoned: the table may still turn ACTIVE,
		// and a Create Table retry adopts it at once (halfcreated.go).
		s.abandonClaim(ctx, account, table, marker)
		return err
	}
	if err := s.enableRecovery(ctx, phys); err != nil {
		// No table is served unprotected, nor left usable but unlisted.
		return s.dropUnprotected(ctx, account, table, phys, marker, err)
	}
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err = s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.opts.CatalogTable),
		Key:                      tableKey(account, table),
		UpdateExpression:         aws.String("SET #s = :active, #t = :t REMOVE #m"),
		ConditionExpression:      aws.String("#m = :m"),
		ExpressionAttributeNames: map[string]string{"#s": catState, "#t": catSince, "#m": catMarker},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":active": &types.AttributeValueMemberS{Value: stateActive},
			":t":      &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339Nano)},
			":m":      &types.AttributeValueMemberS{Value: marker},
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if old, ok := isConditionFailed(err); ok {
		if stringAttr(old, catState) == stateActive && stringAttr(old, catPhysical) == phys {
			// Active on this very table: our update, applied by an
			// attempt whose answer was lost (or a takeover that finished
			// the same table; either way the table is there).
			return nil
		}
		return fmt.Errorf("dynamostore: table %q was taken over by another create: %w", table, store.ErrTableExists)
	}
	if err != nil {
		// Maybe not applied: a retry, or any look at the table, finishes it.
		s.abandonClaim(ctx, account, table, marker)
		return s.catalogErr(ctx, "create table", err)
	}
	return nil
}

// entityTableInput is the CreateTable request of an Azure table's DynamoDB
// table, with the order index in the ordered layout.
func (s *Store) entityTableInput(phys string) *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(phys),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: keyAttributeDefinitions(attrPartitionKey, attrRowKey),
		KeySchema:            keySchema(attrPartitionKey, attrRowKey),
	}
	if s.opts.Layout == LayoutOrdered {
		in.AttributeDefinitions = append(in.AttributeDefinitions, orderAttributeDefinitions(false)...)
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{orderIndexDefinition()}
	}
	return in
}

// releaseClaim removes our creating item after a failed create. It runs even
// when ctx is done, briefly, so a timeout does not leave the name claimed.
func (s *Store) releaseClaim(ctx context.Context, account, table, marker string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RequestTimeout)
	defer cancel()
	_, _ = s.db.DeleteItem(cctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.opts.CatalogTable),
		Key:                       tableKey(account, table),
		ConditionExpression:       aws.String("#m = :m"),
		ExpressionAttributeNames:  map[string]string{"#m": catMarker},
		ExpressionAttributeValues: map[string]types.AttributeValue{":m": &types.AttributeValueMemberS{Value: marker}},
	})
}

// describe describes a DynamoDB table; a missing one is store.ErrTableNotFound.
func (s *Store) describe(ctx context.Context, phys string) (*types.TableDescription, error) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	out, err := s.db.DescribeTable(cctx, &dynamodb.DescribeTableInput{TableName: aws.String(phys)})
	if err != nil {
		return nil, mapErr("describe table "+phys, err)
	}
	return out.Table, nil
}

// tableStatus is a DynamoDB table's status; "" when it does not exist.
func (s *Store) tableStatus(ctx context.Context, phys string) (types.TableStatus, error) {
	desc, err := s.describe(ctx, phys)
	if errors.Is(err, store.ErrTableNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return desc.TableStatus, nil
}

// resumeDelete finishes a delete found half done by CreateTable: while the
// DynamoDB table still exists the name is ErrTableBeingDeleted; once it is
// gone the catalog item goes too and the name is free (nil).
func (s *Store) resumeDelete(ctx context.Context, account, table string, old item) error {
	phys := stringAttr(old, catPhysical)
	status, err := s.tableStatus(ctx, phys)
	if err != nil {
		return err
	}
	if status != "" {
		if status != types.TableStatusDeleting {
			if err := s.deletePhysical(ctx, phys); err != nil {
				return err
			}
		}
		return fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableBeingDeleted)
	}
	return s.removeDeleted(ctx, account, table)
}

// DeleteTable marks the table deleting, deletes its DynamoDB table and
// removes its catalog item. With a shared table, tables of either layout
// are deleted through the purge instead (deleteToPurge).
func (s *Store) DeleteTable(ctx context.Context, account, table string) error {
	if s.opts.SharedTable != "" {
		it, err := s.readEntry(ctx, "delete table", account, table)
		if err != nil {
			return err
		}
		if it == nil || stringAttr(it, catState) != stateActive {
			s.cache.drop(account, table)
			return fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableNotFound)
		}
		return s.deleteToPurge(ctx, account, table, it)
	}
	var out *dynamodb.UpdateItemOutput
	var err error
	for finished := false; ; finished = true {
		cctx, cancel := s.call(ctx)
		out, err = s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
			TableName:                aws.String(s.opts.CatalogTable),
			Key:                      tableKey(account, table),
			UpdateExpression:         aws.String("SET #s = :deleting, #t = :t"),
			ConditionExpression:      aws.String("#s = :active"),
			ExpressionAttributeNames: map[string]string{"#s": catState, "#t": catSince},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":deleting": &types.AttributeValueMemberS{Value: stateDeleting},
				":active":   &types.AttributeValueMemberS{Value: stateActive},
				":t":        &types.AttributeValueMemberS{Value: time.Now().UTC().Format(time.RFC3339Nano)},
			},
			ReturnValues:                        types.ReturnValueAllNew,
			ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
		})
		cancel()
		old, ok := isConditionFailed(err)
		if !ok {
			break
		}
		// A half-created table whose DynamoDB table is usable is finished,
		// then deleted like any other (halfcreated.go).
		if finished || !s.finishIfActive(ctx, account, table, old) {
			return fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableNotFound)
		}
	}
	if err != nil {
		return s.catalogErr(ctx, "delete table", err)
	}
	if err := s.deletePhysical(ctx, stringAttr(out.Attributes, catPhysical)); err != nil {
		return err
	}
	return s.removeDeleted(ctx, account, table)
}

func (s *Store) deletePhysical(ctx context.Context, phys string) error {
	err := s.sendDeleteTable(ctx, phys)
	if protected, lerr := s.liftDeletionProtection(ctx, phys, err); lerr != nil {
		return lerr
	} else if protected {
		// Lifting the protection is an UpdateTable, which leaves the table
		// UPDATING for a while on AWS.
		if err := s.waitActive(ctx, phys); err != nil {
			return err
		}
		err = s.sendDeleteTable(ctx, phys)
	}
	if err == nil || isTableMissing(err) {
		return nil
	}
	return mapErr("delete table "+phys, err)
}

// deleteTableAttempts bounds the DeleteTables sent to a table that answers
// ResourceInUseException.
const deleteTableAttempts = 3

// sendDeleteTable sends DeleteTable. A table CREATING or UPDATING answers
// ResourceInUseException (DynamoDB's DeleteTable reference): it waits until
// the table is ACTIVE and sends again, a bounded number of times.
func (s *Store) sendDeleteTable(ctx context.Context, phys string) error {
	for attempt := 1; ; attempt++ {
		cctx, cancel := s.call(ctx)
		_, err := s.db.DeleteTable(cctx, &dynamodb.DeleteTableInput{TableName: aws.String(phys)})
		cancel()
		if !isTableInUse(err) || attempt == deleteTableAttempts {
			return err
		}
		if err := s.waitActive(ctx, phys); err != nil {
			return err
		}
	}
}

// removeDeleted removes a deleting catalog item. Losing the race to another
// remover is fine.
func (s *Store) removeDeleted(ctx context.Context, account, table string) error {
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.db.DeleteItem(cctx, &dynamodb.DeleteItemInput{
		TableName:                 aws.String(s.opts.CatalogTable),
		Key:                       tableKey(account, table),
		ConditionExpression:       aws.String("#s = :deleting"),
		ExpressionAttributeNames:  map[string]string{"#s": catState},
		ExpressionAttributeValues: map[string]types.AttributeValue{":deleting": &types.AttributeValueMemberS{Value: stateDeleting}},
	})
	if _, ok := isConditionFailed(err); ok || err == nil {
		return nil
	}
	return s.catalogErr(ctx, "delete table", err)
}
