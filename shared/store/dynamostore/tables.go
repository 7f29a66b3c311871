package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// A table's life in the catalog (docs/dynamodb.md, "Shared layout"):
//
//	(none or deleted) --CreateTable--> active --DeleteTable--> deleted
//
// Create Table is one conditional Put of an active entry with a fresh id,
// in the shared table. Delete Table is one TransactWriteItems that marks
// the entry deleted and adds a purge item, which the purge (purge.go)
// works off later; the deleted entry stays as a tombstone that says when
// the name was freed, until the purge is done. Both write the entry's
// copies (copies.go) in the same transaction. No request creates, waits
// for or deletes a DynamoDB table.

const (
	catID        = "Id"        // the table's id in its entities' keys; none in a placement
	catDeletedAt = "DeletedAt" // deleted entries and purge items: when (deletedAtLayout)
	// catExpires is the catalog table's TTL attribute (Unix seconds;
	// template.yaml's CatalogTable TimeToLiveSpecification): DynamoDB
	// removes a tombstone and its copies by then, should the purge, which
	// removes them when it is done, never finish.
	catExpires = "Expires"

	stateDeleted = "deleted"

	// tombstoneLifetime is how long a tombstone may stay if its purge
	// never finishes (catExpires).
	tombstoneLifetime = 7 * 24 * time.Hour

	// deletedAtLayout is fixed-width, so the strings compare as the times.
	deletedAtLayout = "2006-01-02T15:04:05.000000000Z"
)

func formatDeletedAt(t time.Time) string { return t.UTC().Format(deletedAtLayout) }

// recreateDelay is how long a deleted name stays store.ErrTableBeingDeleted
// (409 TableBeingDeleted, which Azure answers for about 40 s after a
// delete): until every process's cached look-up of the old table has
// expired (CatalogCacheTTL), plus a second for the difference between two
// machines' clocks. Sooner, a process could still send an entity write for
// the name to the old id, and a client that saw the new table created
// would not find its write. The purge's progress does not matter: the new
// table has a new id, so nothing of the old one can show through.
func (s *Store) recreateDelay() time.Duration { return s.opts.CatalogCacheTTL + time.Second }

// sharedTableInput is the shared table as New creates it for the local
// server; on AWS template.yaml declares the same table (EntityTable).
func (s *Store) sharedTableInput() *dynamodb.CreateTableInput {
	return &dynamodb.CreateTableInput{
		TableName:              aws.String(s.opts.SharedTable),
		BillingMode:            types.BillingModePayPerRequest,
		AttributeDefinitions:   append(keyAttributeDefinitions(attrPartitionKey, attrRowKey), orderAttributeDefinitions()...),
		KeySchema:              keySchema(attrPartitionKey, attrRowKey),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{orderIndexDefinition()},
	}
}

// CreateTable creates an Azure table in the shared table (createEntry).
func (s *Store) CreateTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	return s.createEntry(ctx, account, table, nil)
}

// createEntry creates an Azure table in the shared table: one conditional
// Put of its catalog entry, with the entry's copies (copies.go) in the same
// transaction, and no waiting. The entry's marker lets the store recognise
// its own write when an answer was lost. extra are more attributes of the
// entry (a restore creates its target frozen: catRestoring).
func (s *Store) createEntry(ctx context.Context, account, table string, extra item) (store.TableInfo, error) {
	now := time.Now()
	marker := newGen()
	it := tableKey(account, table)
	it[catName] = str(table)
	it[catState] = str(stateActive)
	it[catPhysical] = str(s.opts.SharedTable)
	it[catID] = str(newGen())
	it[catMarker] = str(marker)
	it[catRev] = str(marker)
	it[catSince] = str(now.UTC().Format(time.RFC3339Nano))
	maps.Copy(it, extra)
	in := &dynamodb.TransactWriteItemsInput{TransactItems: append([]types.TransactWriteItem{{Put: &types.Put{
		TableName:                aws.String(s.opts.CatalogTable),
		Item:                     it,
		ConditionExpression:      aws.String("attribute_not_exists(#k) OR (#s = :deleted AND #d < :reuse)"),
		ExpressionAttributeNames: map[string]string{"#k": catKey, "#s": catState, "#d": catDeletedAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":deleted": str(stateDeleted),
			":reuse":   str(formatDeletedAt(now.Add(-s.recreateDelay()))),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}}, s.copyPuts(account, table, it)...)}
	// The client's retries of a lost answer carry the transaction's
	// ClientRequestToken, which makes them idempotent; a second call, once
	// they ran out, meets our own marker if the first was applied.
	var err error
	for range 2 {
		if err = s.catalogWrite(ctx, "create table", func(cctx context.Context, opt func(*dynamodb.Options)) error {
			_, err := s.db.TransactWriteItems(cctx, in, opt)
			return err
		}); !errors.Is(err, store.ErrOutcomeUnknown) {
			break
		}
	}
	if err == nil {
		s.cacheEntry(account, table, it)
		return store.TableInfo{Name: table}, nil
	}
	old, ok := cancelledOnCondition(err, 0)
	if !ok {
		return store.TableInfo{}, mapErr("create table", err)
	}
	switch {
	case stringAttr(old, catMarker) == marker:
		s.cacheEntry(account, table, it)
		return store.TableInfo{Name: table}, nil
	case stringAttr(old, catState) == stateDeleted:
		return store.TableInfo{}, fmt.Errorf("dynamostore: table %q was deleted less than %v ago: %w", table, s.recreateDelay(), store.ErrTableBeingDeleted)
	case leftHalfWay(old, now):
		// An earlier release's per-table Delete or Create Table that
		// stopped half way: its DynamoDB table goes to the purge, and the
		// name to the new table.
		if err := s.handOver(ctx, account, table, it, old); err != nil {
			return store.TableInfo{}, err
		}
		s.cacheEntry(account, table, it)
		return store.TableInfo{Name: table}, nil
	}
	return store.TableInfo{}, fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableExists)
}

func (s *Store) cacheEntry(account, table string, it item) {
	if loc, err := entryLocation(account, table, it); err == nil {
		s.cache.put(account, table, loc, s.opts.CatalogCacheTTL)
	}
}

// catalogWrite sends one catalog transaction and maps its error as an
// entity write's (mapWriteErr): 503 only when it surely was not applied,
// 500 OperationTimedOut when it may have been. A transaction cancelled by
// its conditions comes back as DynamoDB's error, for the caller to read.
// The client's retries stay on: the transaction's ClientRequestToken makes
// them idempotent.
func (s *Store) catalogWrite(ctx context.Context, op string, send func(context.Context, func(*dynamodb.Options)) error) error {
	cctx, cancel := s.call(ctx)
	defer cancel()
	var attempts writeAttempts
	err := send(cctx, attempts.transaction)
	if err == nil {
		return nil
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) && (cancelledByConditions(tce) || !attempts.maybeSent.Load()) {
		return err
	}
	if isTableMissing(err) {
		return s.catalogErr(ctx, op, err)
	}
	return mapWriteErr(op, err, attempts.maybeSent.Load())
}

// DeleteTable deletes an Azure table, in the shared table or a placement:
// it reads the entry, then one TransactWriteItems marks it deleted and its
// copies with it (the table is gone for every operation at once), and
// adds a purge item; the purge deletes the entities, or the placement's
// DynamoDB table, later, so nothing on the request path deletes a
// DynamoDB table.
func (s *Store) DeleteTable(ctx context.Context, account, table string) error {
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

// deleteToPurge is Delete Table's transaction. it is the active entry as
// read; the transaction is conditioned on its id or table, so a table
// created again meanwhile is not the one deleted.
func (s *Store) deleteToPurge(ctx context.Context, account, table string, it item) error {
	now := time.Now()
	deletedAt := formatDeletedAt(now)
	tomb := tombstone(it, deletedAt, now)
	cond := "#s = :active AND #p = :p"
	values := map[string]types.AttributeValue{
		":active":  str(stateActive),
		":deleted": str(stateDeleted),
		":p":       str(stringAttr(it, catPhysical)),
		":at":      str(deletedAt),
		":rev":     tomb[catRev],
		":x":       tomb[catExpires],
	}
	names := map[string]string{"#s": catState, "#p": catPhysical, "#d": catDeletedAt, "#acl": catACL, "#rev": catRev, "#x": catExpires}
	if id := stringAttr(it, catID); id != "" {
		cond += " AND #id = :id"
		names["#id"] = catID
		values[":id"] = str(id)
	}
	pi := purgeItem(account, stringAttr(it, catName), stringAttr(it, catPhysical), stringAttr(it, catID), deletedAt)
	in := &dynamodb.TransactWriteItemsInput{TransactItems: append([]types.TransactWriteItem{
		{Update: &types.Update{
			TableName:                 aws.String(s.opts.CatalogTable),
			Key:                       tableKey(account, table),
			UpdateExpression:          aws.String("SET #s = :deleted, #d = :at, #rev = :rev, #x = :x REMOVE #acl"),
			ConditionExpression:       aws.String(cond),
			ExpressionAttributeNames:  names,
			ExpressionAttributeValues: values,
		}},
		{Put: &types.Put{TableName: aws.String(s.opts.CatalogTable), Item: pi}},
	}, s.copyPuts(account, table, tomb)...)}
	s.cache.drop(account, table)
	err := s.catalogWrite(ctx, "delete table", func(cctx context.Context, opt func(*dynamodb.Options)) error {
		_, err := s.db.TransactWriteItems(cctx, in, opt)
		return err
	})
	if _, ok := cancelledOnCondition(err, 0); ok {
		return fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableNotFound)
	}
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) {
		return mapErr("delete table", err)
	}
	return err
}

// tombstone is what Delete Table makes of the active entry it (as read):
// the entry deleted at deletedAt (formatDeletedAt), without its stored
// access policies, and with the time DynamoDB's TTL may remove it
// (catExpires) should the purge never finish it.
func tombstone(it item, deletedAt string, now time.Time) item {
	t := maps.Clone(it)
	delete(t, catACL)
	t[catState] = str(stateDeleted)
	t[catDeletedAt] = str(deletedAt)
	t[catRev] = str(newGen())
	t[catExpires] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(tombstoneLifetime).Unix(), 10)}
	return t
}
