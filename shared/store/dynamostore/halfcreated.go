package dynamostore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A half-created table of the per-table layout (issue 23, item 5): Create
// Table claimed the name (a creating catalog entry) and created the
// DynamoDB table, then failed before marking the entry active (the table
// slow to turn ACTIVE, recovery refused, the answer of the last write
// lost). Entity operations of this layout go straight to the DynamoDB
// table, so once it is ACTIVE it is usable though not listed. It finishes
// itself:
//
//   - The creator that gives up marks its claim abandoned (catAbandoned).
//     A Create Table retry that finds an abandoned claim adopts it at once:
//     it waits for ACTIVE, enables recovery and marks it active, and
//     answers success. A claim neither abandoned nor stale belongs to a
//     create still running, which a concurrent Create Table answers 409,
//     as Azure does.
//   - Get Table, List Tables and Delete Table, finding a creating entry
//     whose DynamoDB table is ACTIVE, finish it the same way first (one
//     DescribeTable per creating entry; none in the common case).
//   - When recovery cannot be enabled, the creator deletes the DynamoDB
//     table and frees the name instead of leaving a usable table
//     unlisted: no table is served unprotected.

// catAbandoned marks a creating entry whose creator answered an error
// after the DynamoDB table existed (RFC 3339 time).
const catAbandoned = "Abandoned"

// abandonClaim marks our creating entry abandoned, so a retry adopts it at
// once. It runs even when ctx is done, briefly, like releaseClaim.
func (s *Store) abandonClaim(ctx context.Context, account, table, marker string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RequestTimeout)
	defer cancel()
	_, _ = s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.opts.CatalogTable),
		Key:                      tableKey(account, table),
		UpdateExpression:         aws.String("SET #a = :a"),
		ConditionExpression:      aws.String("#s = :creating AND #m = :m"),
		ExpressionAttributeNames: map[string]string{"#a": catAbandoned, "#s": catState, "#m": catMarker},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":a":        str(time.Now().UTC().Format(time.RFC3339Nano)),
			":creating": str(stateCreating),
			":m":        str(marker),
		},
	})
}

// adoptClaim finishes an abandoned per-table claim (old, as read) for a
// Create Table retry: it waits for the DynamoDB table to be ACTIVE, enables
// recovery and marks the entry active. It reports whether the table is now
// active under that claim's name.
func (s *Store) adoptClaim(ctx context.Context, account, table string, old item) (bool, error) {
	phys := stringAttr(old, catPhysical)
	status, err := s.tableStatus(ctx, phys)
	if err != nil {
		return false, err
	}
	switch status {
	case "", types.TableStatusDeleting:
		// No DynamoDB table (or one going away): nothing to adopt; the
		// stale-claim takeover handles it.
		return false, nil
	case types.TableStatusActive:
	default:
		if err := s.waitActive(ctx, phys); err != nil {
			return false, err
		}
	}
	return s.finishClaim(ctx, account, table, old)
}

// finishClaim marks a creating per-table entry (old, as read) whose
// DynamoDB table is ACTIVE active, after enabling recovery. The update is
// conditioned on the entry being unchanged (its marker), so only one
// finisher writes; one that finds the entry already active on the same
// DynamoDB table reports success too.
func (s *Store) finishClaim(ctx context.Context, account, table string, old item) (bool, error) {
	phys := stringAttr(old, catPhysical)
	if stringAttr(old, catID) != "" || phys == "" {
		return false, nil
	}
	if err := s.enableRecovery(ctx, phys); err != nil {
		return false, err
	}
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.opts.CatalogTable),
		Key:                      tableKey(account, table),
		UpdateExpression:         aws.String("SET #s = :active, #t = :t REMOVE #m, #a"),
		ConditionExpression:      aws.String("#s = :creating AND #m = :m AND #p = :p"),
		ExpressionAttributeNames: map[string]string{"#s": catState, "#t": catSince, "#m": catMarker, "#a": catAbandoned, "#p": catPhysical},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":active":   str(stateActive),
			":creating": str(stateCreating),
			":t":        str(time.Now().UTC().Format(time.RFC3339Nano)),
			":m":        str(stringAttr(old, catMarker)),
			":p":        str(phys),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if cur, ok := isConditionFailed(err); ok {
		return stringAttr(cur, catState) == stateActive && stringAttr(cur, catPhysical) == phys, nil
	}
	if err != nil {
		return false, s.catalogErr(ctx, "create table", err)
	}
	return true, nil
}

// finishIfActive is what Get Table, List Tables and Delete Table do with a
// creating per-table entry: finish it when its DynamoDB table is ACTIVE
// (usable already), and report whether it is active now. A failure leaves
// the entry as it was (not listed), for the next look.
func (s *Store) finishIfActive(ctx context.Context, account, table string, it item) bool {
	if stringAttr(it, catState) != stateCreating || stringAttr(it, catID) != "" {
		return false
	}
	status, err := s.tableStatus(ctx, stringAttr(it, catPhysical))
	if err != nil || status != types.TableStatusActive {
		return false
	}
	done, err := s.finishClaim(ctx, account, table, it)
	return err == nil && done
}

// dropUnprotected deletes the DynamoDB table of our claim whose recovery
// could not be enabled, and frees the name: the table must not stay usable
// while unlisted, and must not be listed unprotected.
func (s *Store) dropUnprotected(ctx context.Context, account, table, phys, marker string, cause error) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RequestTimeout)
	defer cancel()
	if err := s.deletePhysical(dctx, phys); err != nil {
		// The table stays; a retry adopts it once recovery works.
		s.abandonClaim(ctx, account, table, marker)
		return fmt.Errorf("dynamostore: create table %q: %w (and deleting its DynamoDB table failed: %v)", table, cause, err)
	}
	s.releaseClaim(ctx, account, table, marker)
	return fmt.Errorf("dynamostore: create table %q: its DynamoDB table was deleted again: %w", table, cause)
}
