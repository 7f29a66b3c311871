package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Catalog items. The hash key is the account (encoded like entity keys, so
// even an empty name is a legal key); the range key is "table:" plus the
// lower-cased table name for a table, or "service" for the account's service
// properties document.
const (
	catAccount  = "Account"
	catKey      = "Key"
	catName     = "Name"     // the table name in the case it was created with
	catState    = "State"    // stateActive or stateDeleted (stateCreating, stateDeleting: earlier releases)
	catPhysical = "Physical" // the DynamoDB table holding the entities
	catMarker   = "Marker"   // identifies the Create Table call that wrote the entry
	catSince    = "Since"    // when the entry entered its state (RFC 3339)
	catACL      = "ACL"      // list of stored access policies
	catDoc      = "Doc"      // the service properties document

	tableKeyPrefix = "table:"
	serviceKey     = "service"

	stateActive = "active"
	// stateCreating and stateDeleting are the states an earlier release's
	// per-table Create or Delete Table passed through, and left behind when
	// it stopped half way: no table is served from them (only active
	// entries are), and the next Create Table of the name hands their
	// DynamoDB table to the purge (placement.go, handOver).
	stateCreating = "creating"
	stateDeleting = "deleting"
)

// tableKeyEnd bounds a range read of table items: ';' follows ':'.
const tableKeyEnd = "table;"

func catalogKey(account, key string) item {
	return item{
		catAccount: &types.AttributeValueMemberS{Value: encodeKey(account)},
		catKey:     &types.AttributeValueMemberS{Value: key},
	}
}

func tableKey(account, table string) item {
	return catalogKey(account, tableKeyPrefix+strings.ToLower(table))
}

// GetTable returns the table's info from the catalog: one consistent
// GetItem, of one of the entry's copies (copies.go), since stored access
// policies are read with every request that names one.
func (s *Store) GetTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	it, err := s.readTableEntry(ctx, "get table", account, table)
	if err != nil {
		return store.TableInfo{}, err
	}
	if it == nil || stringAttr(it, catState) != stateActive {
		return store.TableInfo{}, fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableNotFound)
	}
	return tableInfo(it)
}

// readEntry reads a table's catalog entry, consistently; nil when there is
// none.
func (s *Store) readEntry(ctx context.Context, op, account, table string) (item, error) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	out, err := s.db.GetItem(cctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.opts.CatalogTable),
		Key:            tableKey(account, table),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, s.catalogErr(ctx, op, err)
	}
	return out.Item, nil
}

func tableInfo(it item) (store.TableInfo, error) {
	acl, err := decodeACL(it[catACL])
	if err != nil {
		return store.TableInfo{}, err
	}
	return store.TableInfo{Name: stringAttr(it, catName), ACL: acl}, nil
}

// catalogErr maps errors of catalog requests. A missing catalog table is a
// broken deployment, not a missing Azure table: DynamoDB lost it (deleted,
// or restored or restarted empty), and with it the list of tables. The error
// names the table and what to do, wraps store.ErrUnavailable (503: nothing
// was done), and the store keeps no state about it, so requests succeed
// again as soon as the table is back, without a restart. On a local
// endpoint (Options.Endpoint) the store re-creates it empty at once, as New
// does at first start.
func (s *Store) catalogErr(ctx context.Context, op string, err error) error {
	if !isTableMissing(err) {
		return mapErr(op, err)
	}
	return s.lostTable(ctx, op, s.opts.CatalogTable, "the list of tables")
}

// sharedTableErr is what an entity operation on the shared table answers
// when DynamoDB says the shared table itself is missing: a broken
// deployment, as for the catalog (catalogErr), not a missing Azure table.
// A DynamoDB Local restarted in memory loses both, and on a local endpoint
// both come back empty, whichever a request meets first.
func (s *Store) sharedTableErr(ctx context.Context, loc location, err error) error {
	if !loc.shared() || loc.table != s.opts.SharedTable || !errors.Is(err, store.ErrTableNotFound) {
		return err
	}
	return s.lostTable(ctx, "entity operation", s.opts.SharedTable, "every table's entities")
}

// lostTable is the answer to a request that found one of the deployment's
// own DynamoDB tables (the catalog, the shared table) missing: 503 with
// what to do; on a local endpoint, both are created again, empty, as New
// does at first start.
func (s *Store) lostTable(ctx context.Context, op, name, holds string) error {
	if !s.opts.createsTables {
		return fmt.Errorf("dynamostore: %s: the table %s does not exist: DynamoDB lost it (deleted, or restored or restarted empty), and %s with it. "+
			"Restore it (point-in-time recovery), or redeploy the stack to create it empty; requests succeed again once it is back: %w",
			op, name, holds, store.ErrUnavailable)
	}
	s.recreating.Lock()
	defer s.recreating.Unlock()
	if err := s.ensureDeploymentTables(ctx); err != nil {
		return fmt.Errorf("dynamostore: %s: the table %s does not exist, and re-creating it failed: %w", op, name, err)
	}
	return fmt.Errorf("dynamostore: %s: the table %s did not exist (DynamoDB lost it, and %s with it); "+
		"it has been re-created empty, as at first start: %w", op, name, holds, store.ErrUnavailable)
}

// QueryTables lists an account's active tables in lower-cased name order:
// Query on the account's catalog partition, Match applied in Go.
func (s *Store) QueryTables(ctx context.Context, account string, q store.TableQuery) (store.TablePage, error) {
	top := store.PageSize(q.Top)
	in := &dynamodb.QueryInput{
		TableName:                aws.String(s.opts.CatalogTable),
		ConsistentRead:           aws.Bool(true),
		KeyConditionExpression:   aws.String("#a = :a AND #k BETWEEN :lo AND :hi"),
		ExpressionAttributeNames: map[string]string{"#a": catAccount, "#k": catKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":a":  &types.AttributeValueMemberS{Value: encodeKey(account)},
			":lo": &types.AttributeValueMemberS{Value: tableKeyPrefix},
			":hi": &types.AttributeValueMemberS{Value: tableKeyEnd},
		},
		// One more than a page, so the page knows whether one follows;
		// without a limit DynamoDB reads up to 1 MB (about 5,000 tables)
		// for every page of a large account, and bills the reads. Later
		// reads grow with a selective Match (see nextReadLimit).
		Limit: aws.Int32(int32(top) + 1),
	}
	if q.After != "" {
		// Strictly after: legal table names hold no control characters.
		// A cursor no table name can be (callers check tokens, this keeps
		// the store safe without them) still reads from a key DynamoDB
		// takes, and the loop drops what is not after it.
		lo := runePrefix(tableKeyPrefix+q.After+"\x01", maxRangeKeyBytes)
		if lo >= tableKeyEnd {
			return store.TablePage{}, nil
		}
		in.ExpressionAttributeValues[":lo"] = &types.AttributeValueMemberS{Value: lo}
	}
	var page store.TablePage
	var examined int
	deadline := time.Now().Add(s.opts.QueryTimeBudget)
	for {
		cctx, cancel := s.call(ctx)
		out, err := s.db.Query(cctx, in)
		cancel()
		if err != nil {
			return store.TablePage{}, s.catalogErr(ctx, "query tables", err)
		}
		for i, it := range out.Items {
			lower := strings.TrimPrefix(stringAttr(it, catKey), tableKeyPrefix)
			if q.After != "" && lower <= q.After {
				continue
			}
			if stringAttr(it, catState) != stateActive {
				continue
			}
			info, err := tableInfo(it)
			if err != nil {
				return store.TablePage{}, err
			}
			examined++
			if q.Match != nil && !q.Match(info) {
				continue
			}
			page.Tables = append(page.Tables, info)
			if len(page.Tables) == top {
				if i < len(out.Items)-1 || out.LastEvaluatedKey != nil {
					page.Next = lower
				}
				return page, nil
			}
		}
		if out.LastEvaluatedKey == nil {
			return page, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if time.Now().After(deadline) {
			page.Next = strings.TrimPrefix(stringAttr(out.LastEvaluatedKey, catKey), tableKeyPrefix)
			return page, nil
		}
		in.Limit = aws.Int32(int32(nextReadLimit(int(*in.Limit), top-len(page.Tables), examined, len(page.Tables))))
	}
}

// entryWriteAttempts bounds the read-and-write rounds of a change to a
// table's entry that other writers keep changing.
const entryWriteAttempts = 3

// SetTableACL replaces the table's stored access policies: it reads the
// entry, then writes it in one transaction with its copies, conditioned
// on the entry being unchanged since; a change meanwhile makes it read
// again.
func (s *Store) SetTableACL(ctx context.Context, account, table string, acl []model.SignedIdentifier) error {
	for range entryWriteAttempts {
		it, err := s.readEntry(ctx, "set table ACL", account, table)
		if err != nil {
			return err
		}
		if it == nil || stringAttr(it, catState) != stateActive {
			return fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableNotFound)
		}
		next := maps.Clone(it)
		delete(next, catACL)
		if len(acl) > 0 {
			next[catACL] = encodeACL(acl)
		}
		next[catRev] = str(newGen())
		err = s.replaceEntry(ctx, "set table ACL", account, table, it, next)
		if _, changed := cancelledOnCondition(err, 0); !changed {
			return err
		}
	}
	return fmt.Errorf("dynamostore: set table ACL of %q: the table's entry kept changing: %w", table, store.ErrBusy)
}

// replaceEntry writes next in place of a table's entry old (as read) and
// its copies, in one transaction conditioned on old being unchanged, plus
// any other actions. A cancelled transaction comes back as DynamoDB's
// error (cancelledOnCondition(err, 0) tells a changed entry).
func (s *Store) replaceEntry(ctx context.Context, op, account, table string, old, next item, other ...types.TransactWriteItem) error {
	cond, names, values := entryUnchanged(old)
	actions := append([]types.TransactWriteItem{{Put: &types.Put{
		TableName:                 aws.String(s.opts.CatalogTable),
		Item:                      next,
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}}, other...)
	in := &dynamodb.TransactWriteItemsInput{TransactItems: append(actions, s.copyPuts(account, table, next)...)}
	s.cache.drop(account, table)
	err := s.catalogWrite(ctx, op, func(cctx context.Context, opt func(*dynamodb.Options)) error {
		_, err := s.db.TransactWriteItems(cctx, in, opt)
		return err
	})
	var tce *types.TransactionCanceledException
	if errors.As(err, &tce) && !cancelledByConditions(tce) {
		return mapErr(op, err)
	}
	return err
}

// ACL policies are stored as a list of maps with the Azure element names;
// times as RFC 3339 and absent when zero.
func encodeACL(acl []model.SignedIdentifier) types.AttributeValue {
	list := make([]types.AttributeValue, len(acl))
	for i, si := range acl {
		m := item{
			"Id":         &types.AttributeValueMemberS{Value: si.ID},
			"Permission": &types.AttributeValueMemberS{Value: si.Permission},
		}
		if !si.Start.IsZero() {
			m["Start"] = &types.AttributeValueMemberS{Value: si.Start.UTC().Format(time.RFC3339Nano)}
		}
		if !si.Expiry.IsZero() {
			m["Expiry"] = &types.AttributeValueMemberS{Value: si.Expiry.UTC().Format(time.RFC3339Nano)}
		}
		list[i] = &types.AttributeValueMemberM{Value: m}
	}
	return &types.AttributeValueMemberL{Value: list}
}

func decodeACL(av types.AttributeValue) ([]model.SignedIdentifier, error) {
	list, ok := av.(*types.AttributeValueMemberL)
	if !ok || len(list.Value) == 0 {
		return nil, nil
	}
	acl := make([]model.SignedIdentifier, len(list.Value))
	for i, el := range list.Value {
		m, ok := el.(*types.AttributeValueMemberM)
		if !ok {
			return nil, fmt.Errorf("%w: ACL entry %d is %T", errCorrupt, i, el)
		}
		si := model.SignedIdentifier{ID: stringAttr(m.Value, "Id"), Permission: stringAttr(m.Value, "Permission")}
		for _, f := range []struct {
			name string
			dst  *time.Time
		}{{"Start", &si.Start}, {"Expiry", &si.Expiry}} {
			if v := stringAttr(m.Value, f.name); v != "" {
				t, err := time.Parse(time.RFC3339Nano, v)
				if err != nil {
					return nil, fmt.Errorf("%w: ACL entry %d %s: %v", errCorrupt, i, f.name, err)
				}
				*f.dst = t
			}
		}
		acl[i] = si
	}
	return acl, nil
}

// GetServiceProperties returns the account's document, or nil when unset.
func (s *Store) GetServiceProperties(ctx context.Context, account string) ([]byte, error) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	out, err := s.db.GetItem(cctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.opts.CatalogTable),
		Key:            catalogKey(account, serviceKey),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, s.catalogErr(ctx, "get service properties", err)
	}
	doc, ok := out.Item[catDoc].(*types.AttributeValueMemberB)
	if !ok {
		return nil, nil
	}
	if doc.Value == nil {
		return []byte{}, nil
	}
	return doc.Value, nil
}

// SetServiceProperties stores the account's document (at most DynamoDB's
// 400 KB item; Azure's documents are a few KB).
func (s *Store) SetServiceProperties(ctx context.Context, account string, doc []byte) error {
	it := catalogKey(account, serviceKey)
	it[catDoc] = &types.AttributeValueMemberB{Value: append([]byte{}, doc...)}
	cctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.db.PutItem(cctx, &dynamodb.PutItemInput{TableName: aws.String(s.opts.CatalogTable), Item: it}); err != nil {
		return s.catalogErr(ctx, "set service properties", err)
	}
	return nil
}
