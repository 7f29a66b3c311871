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

// What the store still does with the DynamoDB tables of earlier releases,
// beyond serving the placements (location.go): taking over a name that a
// per-table Create or Delete Table left half way, and deleting a
// placement's DynamoDB table for the purge.
//
// A release before the shared table created a DynamoDB table per Azure
// table: it claimed the name with a creating entry, created the table,
// waited for it and marked the entry active; its Delete Table marked the
// entry deleting, deleted the table and removed the entry. One that
// stopped between the steps left a creating or deleting entry behind. Such
// an entry is no table (GetTable, Query Tables and every entity operation
// answer as for a missing one), and the next Create Table of the name
// hands its DynamoDB table, if any, to the purge (handOver), in the
// transaction that creates the new table in the shared table. A table a
// create left half way was never acknowledged to its client, so whatever
// it holds goes with it.

// staleCreate is how old a creating entry must be before Create Table
// takes the name over: an earlier release's create waited at most 25 s
// for its DynamoDB table, so a younger entry may still be one that is
// running, during an upgrade (409 TableAlreadyExists, as a concurrent
// create answers).
const staleCreate = 25*time.Second + time.Minute

// leftHalfWay reports whether old, an entry Create Table found in its way
// at now, is an earlier release's per-table create or delete that stopped
// half way.
func leftHalfWay(old item, now time.Time) bool {
	switch stringAttr(old, catState) {
	case stateDeleting:
		return true
	case stateCreating:
		since, _ := time.Parse(time.RFC3339Nano, stringAttr(old, catSince))
		return now.Sub(since) >= staleCreate
	}
	return false
}

// handOver replaces a per-table entry left half way (old) by the new entry
// it, and adds a purge item for old's DynamoDB table, in one transaction
// conditioned on old being unchanged: nothing on the request path deletes
// a DynamoDB table.
func (s *Store) handOver(ctx context.Context, account, table string, it, old item) error {
	pi := purgeItem(account, stringAttr(old, catName), stringAttr(old, catPhysical), "", formatDeletedAt(time.Now()))
	in := &dynamodb.TransactWriteItemsInput{TransactItems: append([]types.TransactWriteItem{
		{Put: &types.Put{
			TableName:                aws.String(s.opts.CatalogTable),
			Item:                     it,
			ConditionExpression:      aws.String("#s = :s AND #p = :p"),
			ExpressionAttributeNames: map[string]string{"#s": catState, "#p": catPhysical},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":s": str(stringAttr(old, catState)),
				":p": str(stringAttr(old, catPhysical)),
			},
		}},
		{Put: &types.Put{TableName: aws.String(s.opts.CatalogTable), Item: pi}},
	}, s.copyPuts(account, table, it)...)}
	err := s.catalogWrite(ctx, "create table", func(cctx context.Context, opt func(*dynamodb.Options)) error {
		_, err := s.db.TransactWriteItems(cctx, in, opt)
		return err
	})
	if _, ok := cancelledOnCondition(err, 0); ok {
		return fmt.Errorf("dynamostore: table %q: %w", stringAttr(it, catName), store.ErrTableExists)
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		// Cancelled for another reason (a conflict, throttling): busy,
		// not a table that exists.
		return mapErr("create table", err)
	}
	return err
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

// deletePhysical deletes a placement's DynamoDB table for the purge, lifting
// its deletion protection first when it has one; a table already gone is
// no error.
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

// liftDeletionProtection turns deletion protection off (an earlier
// release's tables could be created with it) so that the purge can delete
// the table; it reports whether the table was protected.
func (s *Store) liftDeletionProtection(ctx context.Context, phys string, deleteErr error) (bool, error) {
	if !hasUnmodeledCode(deleteErr, "ValidationException") {
		return false, nil
	}
	// DynamoDB refuses a protected table's DeleteTable with a plain
	// ValidationException; the table's description, not the message,
	// says whether protection was the reason (errors are told apart by
	// type, never by text: doc.go, "Errors").
	desc, err := s.describe(ctx, phys)
	if err != nil || !aws.ToBool(desc.DeletionProtectionEnabled) {
		return false, nil
	}
	cctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.db.UpdateTable(cctx, &dynamodb.UpdateTableInput{TableName: aws.String(phys), DeletionProtectionEnabled: aws.Bool(false)}); err != nil {
		return true, fmt.Errorf("dynamostore: lift deletion protection of %s: %w", phys, mapErr("update table "+phys, err))
	}
	return true, nil
}
