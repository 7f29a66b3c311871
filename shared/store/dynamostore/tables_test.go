package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

func TestConcurrentCreateTable(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := dynamolocal.Context(t, testTimeout)
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = s.CreateTable(ctx, "acct", "Raced") })
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrTableExists):
			t.Errorf("CreateTable: %v; want success or ErrTableExists", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d creates won; want exactly 1", wins)
	}
	if _, err := s.GetTable(ctx, "acct", "raced"); err != nil {
		t.Errorf("GetTable: %v", err)
	}
}

func TestEmptyAccountName(t *testing.T) {
	t.Parallel()
	// DynamoDB rejects empty key strings; the catalog encodes accounts like
	// entity keys, so even an empty account name works.
	s := newTestStore(t)
	ctx := dynamolocal.Context(t, testTimeout)
	if _, err := s.CreateTable(ctx, "", "Tbl"); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	if page, err := s.QueryTables(ctx, "", store.TableQuery{Top: 5}); err != nil || len(page.Tables) != 1 {
		t.Errorf("QueryTables = %+v, %v", page, err)
	}
	if err := s.SetServiceProperties(ctx, "", []byte("<x/>")); err != nil {
		t.Errorf("SetServiceProperties: %v", err)
	}
}

// A $filter on TableName that matches few tables (the SDKs' prefix filter,
// TableName ge 'x' and TableName lt 'y') grows the catalog reads after one
// that did not fill the page, as entity queries do, instead of reading Top+1
// tables per Query across the whole account. The last read, short of its
// limit, tells that nothing follows, so the page has no continuation.
func TestQueryTablesSelectiveMatch(t *testing.T) {
	t.Parallel()
	calls := newCallCounter()
	s := newTestStoreWith(t, Options{}, calls.option)
	ctx := dynamolocal.Context(t, testTimeout)
	const n = 60
	for i := range n {
		if _, err := s.CreateTable(ctx, "acct", fmt.Sprintf("t%02d", i)); err != nil {
			t.Fatalf("CreateTable: %v", err)
		}
	}
	last := fmt.Sprintf("t%02d", n-1)
	calls.take()
	page, err := s.QueryTables(ctx, "acct", store.TableQuery{Top: 1, Match: func(ti store.TableInfo) bool { return ti.Name >= last }})
	if err != nil {
		t.Fatalf("QueryTables: %v", err)
	}
	if len(page.Tables) != 1 || page.Tables[0].Name != last || page.Next != "" {
		t.Errorf("QueryTables = %+v; want only %s and no continuation", page, last)
	}
	// Limits 2, 8, 32 and 128: 4 Queries where Top+1 would take 30.
	if got := calls.take()["Query"]; got > 4 {
		t.Errorf("QueryTables made %d Queries for %d tables; want at most 4", got, n)
	}

	// Unfiltered, a page reads Top+1 tables and no more.
	page, err = s.QueryTables(ctx, "acct", store.TableQuery{Top: 5})
	if err != nil || len(page.Tables) != 5 || page.Next != "t04" {
		t.Fatalf("QueryTables(Top 5) = %+v, %v", page, err)
	}
	if got := calls.take(); got["Query"] != 1 {
		t.Errorf("unfiltered QueryTables made %v; want 1 Query", got)
	}
}

// earlierItem is an entity as the releases before the shared table wrote
// it into its table's own DynamoDB table, before the order index existed
// (no $s, $o): every kind of value, typed ones under "Name@", and the
// property count bound $n.
func earlierItem(pk, rk string) item {
	return item{
		attrPartitionKey: str(pk),
		attrRowKey:       str(rk),
		attrTimestamp:    str("2026-11-20T10:00:00.1234567Z"),
		"Name":           str("written by an earlier release"),
		"Count":          &types.AttributeValueMemberN{Value: "7"},
		"Ratio":          &types.AttributeValueMemberN{Value: "0.5"},
		"Flag":           &types.AttributeValueMemberBOOL{Value: true},
		"Blob":           &types.AttributeValueMemberB{Value: []byte{1, 2, 3}},
		"Total@":         &types.AttributeValueMemberN{Value: "1099511627776"},
		"When@":          str("2026-01-02T03:04:05.0000006Z"),
		"Ref@":           str("c9da6455-213d-42c9-9a79-3e9149a57833"),
		"Whole@":         str("3"),
		attrCount:        &types.AttributeValueMemberN{Value: "9"},
	}
}

// earlierEntity is earlierItem as the store answers it.
func earlierEntity(pk, rk string) *model.Entity {
	when := time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: time.Date(2026, 11, 20, 10, 0, 0, 123456700, time.UTC),
		Properties: props{
			"Name": edm.NewString("written by an earlier release"), "Count": edm.NewInt32(7), "Ratio": edm.NewDouble(0.5),
			"Flag": edm.NewBoolean(true), "Blob": edm.NewBinary([]byte{1, 2, 3}), "Total": edm.NewInt64(1 << 40),
			"When": edm.NewDateTime(when), "Ref": edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"), "Whole": edm.NewDouble(3),
		}}
}

// putRaw writes items into a DynamoDB table as they are.
func putRaw(t *testing.T, s *Store, table string, items ...item) {
	t.Helper()
	for _, it := range items {
		if _, err := s.db.PutItem(dynamolocal.Context(t, testTimeout), &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPlacementsOfEarlierReleases serves tables as the releases before the
// shared table left them (dynamolocal.CreatePerTable: a DynamoDB table of
// their own, a catalog entry without id or copies), with entities as they
// wrote them, beside a table in the shared table: read, queried (through
// the order index, or by Scan on a table without it), written, listed,
// given stored access policies, and deleted through the purge, which
// deletes the DynamoDB table.
func TestPlacementsOfEarlierReleases(t *testing.T) {
	t.Parallel()
	s := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond, CatalogCacheTTL: 50 * time.Millisecond})
	ctx := dynamolocal.Context(t, testTimeout)
	ordered := createPlacement(t, s, "acct", "Ordered", true)
	unordered := createPlacement(t, s, "acct", "Unordered", false)
	if _, err := s.CreateTable(ctx, "acct", "Shared"); err != nil {
		t.Fatal(err)
	}
	// The unordered table: items of a release before the order index, the
	// empty keys stored as "\x01".
	putRaw(t, s, unordered, earlierItem("p1", "r1"), earlierItem("p0", "r2"), earlierItem(emptyKey, emptyKey))
	// The ordered table: items as the releases with the index wrote them.
	for _, e := range []*model.Entity{earlierEntity("p1", "r1"), earlierEntity("p0", "r2"), earlierEntity("", "")} {
		its, err := buildItems(&location{table: ordered}, e)
		if err != nil {
			t.Fatal(err)
		}
		putRaw(t, s, ordered, its.main)
	}

	wantKeys := []string{k("", ""), k("p0", "r2"), k("p1", "r1")}
	for _, table := range []string{"Ordered", "Unordered"} {
		env := &testEnv{t: t, s: s, ctx: ctx, account: "acct", table: table}
		for _, want := range []*model.Entity{earlierEntity("p1", "r1"), earlierEntity("", "")} {
			env.wantStored(want)
		}
		got, _ := pages(t, env, store.Query{}, 2)
		if table == "Unordered" {
			// A Scan: each partition whole, partitions in hash order.
			slices.SortFunc(got, func(a, b *model.Entity) int {
				return strings.Compare(k(a.PartitionKey, a.RowKey), k(b.PartitionKey, b.RowKey))
			})
		}
		wantOrder(t, got, wantKeys)
		page, err := s.QueryEntities(ctx, "acct", table, store.Query{Keys: pkRange("p1"), Top: 10})
		if err != nil || len(page.Entities) != 1 || entityDiff(page.Entities[0], earlierEntity("p1", "r1")) != "" {
			t.Fatalf("%s: partition query: %+v, %v", table, page.Entities, err)
		}
		// Writes land in the placement, as such a release wrote them.
		merge := newEntity("p1", "r1", props{"Count": edm.NewInt64(8)})
		env.mustWrite(store.Op{Kind: store.OpMerge, Entity: merge})
		merged := earlierEntity("p1", "r1")
		merged.Properties["Count"], merged.Timestamp = edm.NewInt64(8), merge.Timestamp
		env.wantStored(merged)
		env.mustWrite(store.Op{Kind: store.OpDelete, Entity: newEntity("p0", "r2", nil)})
		env.insert(newEntity("p2", "new", nil))
		if _, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(dynamolocal.PerTableName(s.opts.TablePrefix, "acct", table)),
			Key: keyItem("p2", "new")}); err != nil {
			t.Fatalf("%s: the new entity is not in the placement: %v", table, err)
		}
		acl := []model.SignedIdentifier{{ID: "policy", Permission: "r"}}
		if err := s.SetTableACL(ctx, "acct", table, acl); err != nil {
			t.Fatal(err)
		}
		if info, err := s.GetTable(ctx, "acct", table); err != nil || len(info.ACL) != 1 || info.Name != table {
			t.Errorf("%s: GetTable after Set Table ACL: %+v, %v", table, info, err)
		}
	}
	tables, err := s.QueryTables(ctx, "acct", store.TableQuery{Top: 10})
	if err != nil || len(tables.Tables) != 3 {
		t.Fatalf("tables: %+v, %v; want Ordered, Shared and Unordered", tables.Tables, err)
	}

	for _, table := range []string{"Ordered", "Unordered"} {
		if err := s.DeleteTable(ctx, "acct", table); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetEntity(ctx, "acct", table, "p1", "r1"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("%s right after Delete Table: %v; want ErrTableNotFound", table, err)
		}
	}
	if _, err := s.describe(ctx, ordered); err != nil {
		t.Fatalf("the DynamoDB table before the purge: %v; want it still there", err)
	}
	time.Sleep(5 * time.Millisecond) // PurgeGrace
	if rep, err := s.Purge(ctx); err != nil || rep.Tables != 2 {
		t.Fatalf("Purge = %+v, %v; want the two DynamoDB tables", rep, err)
	}
	for _, phys := range []string{ordered, unordered} {
		if _, err := s.describe(ctx, phys); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("%s after the purge: %v; want it gone", phys, err)
		}
	}
	// The name is free again, for a table in the shared table.
	env := &testEnv{t: t, s: s, ctx: ctx, account: "acct", table: "ordered"}
	waitRecreate(t, env)
	if loc, err := s.locate(ctx, "acct", "Ordered"); err != nil || loc.table != s.opts.SharedTable {
		t.Errorf("the name created again: %+v, %v; want the shared table", loc, err)
	}
	if _, err := s.GetEntity(ctx, "acct", "Ordered", "p1", "r1"); !errors.Is(err, store.ErrEntityNotFound) {
		t.Errorf("the new table holds the old one's entity: %v", err)
	}
}

// putEntryAsEarlierRelease writes a table's catalog entry as an earlier
// release's per-table Create or Delete Table left it when it stopped half
// way: creating (claimed, with its marker, since since), or deleting.
func putEntryAsEarlierRelease(t *testing.T, s *Store, account, table, state string, since time.Time) {
	t.Helper()
	it := tableKey(account, table)
	it[catName] = str(table)
	it[catState] = str(state)
	it[catPhysical] = str(dynamolocal.PerTableName(s.opts.TablePrefix, account, table))
	if state == stateCreating {
		it[catMarker] = str(newGen())
	}
	it[catSince] = str(since.UTC().Format(time.RFC3339Nano))
	putRaw(t, s, s.opts.CatalogTable, it)
}

// TestCreateTableTakesOverLeftovers: names an earlier release's per-table
// Create or Delete Table left half way are no tables: Get Table, Query
// Tables, entity operations and Delete Table answer as for a missing one
// (a half-created table's entities included). Create Table takes such a
// name, in the shared table, in one transaction that hands the DynamoDB
// table (if any) to the purge; a creating entry younger than staleCreate
// may be a create still running, during an upgrade, and is 409.
func TestCreateTableTakesOverLeftovers(t *testing.T) {
	t.Parallel()
	s := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond})
	ctx := dynamolocal.Context(t, testTimeout)
	long := time.Now().Add(-time.Hour)
	// Deleting: the DynamoDB table was still there.
	createPlacement(t, s, "acct", "HalfDeleted", true)
	putEntryAsEarlierRelease(t, s, "acct", "HalfDeleted", stateDeleting, time.Now())
	// Created, then the create gave up before marking it active: usable,
	// had anyone written to it.
	half := createPlacement(t, s, "acct", "HalfCreated", true)
	putEntryAsEarlierRelease(t, s, "acct", "HalfCreated", stateCreating, long)
	putRaw(t, s, half, earlierItem("p1", "r1"))
	// Claimed, and the process died before CreateTable.
	putEntryAsEarlierRelease(t, s, "acct", "NeverCreated", stateCreating, long)
	// A create running now.
	putEntryAsEarlierRelease(t, s, "acct", "Creating", stateCreating, time.Now())

	leftovers := []string{"HalfDeleted", "HalfCreated", "NeverCreated", "Creating"}
	for _, name := range leftovers {
		if _, err := s.GetTable(ctx, "acct", name); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("GetTable(%s) = %v; want ErrTableNotFound", name, err)
		}
		if _, err := s.GetEntity(ctx, "acct", name, "p1", "r1"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("GetEntity in %s = %v; want ErrTableNotFound", name, err)
		}
		if err := s.DeleteTable(ctx, "acct", name); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("DeleteTable(%s) = %v; want ErrTableNotFound", name, err)
		}
	}
	if page, err := s.QueryTables(ctx, "acct", store.TableQuery{Top: 10}); err != nil || len(page.Tables) != 0 {
		t.Errorf("QueryTables = %+v, %v; want none", page.Tables, err)
	}
	for _, name := range leftovers[:3] {
		if _, err := s.CreateTable(ctx, "acct", name); err != nil {
			t.Fatalf("CreateTable(%s): %v", name, err)
		}
		if err := s.Write(ctx, "acct", name, []store.Op{{Kind: store.OpInsert, Entity: newEntity("p1", "r1", nil)}}); err != nil {
			t.Fatalf("write to the new %s: %v", name, err)
		}
		if loc, err := s.locate(ctx, "acct", name); err != nil || !loc.shared() {
			t.Errorf("%s after the create: %+v, %v; want the shared table", name, loc, err)
		}
	}
	if _, err := s.CreateTable(ctx, "acct", "Creating"); !errors.Is(err, store.ErrTableExists) {
		t.Errorf("CreateTable over a recent claim: %v; want ErrTableExists", err)
	}
	time.Sleep(5 * time.Millisecond) // PurgeGrace
	if rep, err := s.Purge(ctx); err != nil || rep.Tables != 3 {
		t.Fatalf("Purge = %+v, %v; want the three names' DynamoDB tables", rep, err)
	}
	for _, name := range leftovers[:3] {
		if _, err := s.describe(ctx, dynamolocal.PerTableName(s.opts.TablePrefix, "acct", name)); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("the DynamoDB table of %s after the purge: %v; want none", name, err)
		}
	}
}

// inUseAfterUpdate answers the first DeleteTable after an UpdateTable with
// ResourceInUseException, as AWS does while the UpdateTable that lifted
// deletion protection leaves the table UPDATING (DynamoDB Local applies it
// at once).
type inUseAfterUpdate struct {
	mu       sync.Mutex
	updated  bool
	answered int
}

func (f *inUseAfterUpdate) option(o *dynamodb.Options) {
	initHook("inUseAfterUpdate", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		f.mu.Lock()
		switch in.Parameters.(type) {
		case *dynamodb.UpdateTableInput:
			f.updated = true
		case *dynamodb.DeleteTableInput:
			if f.updated {
				f.updated = false
				f.answered++
				f.mu.Unlock()
				return middleware.InitializeOutput{}, middleware.Metadata{}, &types.ResourceInUseException{Message: aws.String("Attempt to change a resource which is still in use: Table is being updated")}
			}
		}
		f.mu.Unlock()
		return next.HandleInitialize(ctx, in)
	})(o)
}

// TestPurgeDeletesProtectedPlacement: a placement an earlier release
// created with deletion protection (TABLEBRIDGE_DELETION_PROTECTION) is
// deleted by the purge, which lifts the protection first, although the
// DeleteTable right after finds the table UPDATING.
func TestPurgeDeletesProtectedPlacement(t *testing.T) {
	t.Parallel()
	fault := &inUseAfterUpdate{}
	s := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond}, fault.option)
	ctx := dynamolocal.Context(t, testTimeout)
	phys := createPlacement(t, s, "acct", "Protected", true)
	if _, err := dynamolocal.Client(t).UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(phys), DeletionProtectionEnabled: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteTable(ctx, "acct", "Protected"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // PurgeGrace
	if rep, err := s.Purge(ctx); err != nil || rep.Tables != 1 {
		t.Fatalf("Purge = %+v, %v", rep, err)
	}
	if fault.answered != 1 {
		t.Errorf("ResourceInUseException answered %d times, want 1", fault.answered)
	}
	if _, err := s.describe(ctx, phys); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("the protected DynamoDB table after the purge: %v; want it gone", err)
	}
}

// TestTakeOverCancelledForAnotherReason: Create Table over a name an earlier
// release left half way is one transaction conditioned on that entry; when
// DynamoDB cancels it for another reason (a conflict with another
// transaction, throttling), the answer is not TableAlreadyExists, and a
// later Create Table takes the name.
func TestTakeOverCancelledForAnotherReason(t *testing.T) {
	t.Parallel()
	var conflict atomic.Bool
	s := newTestStoreWith(t, Options{}, initHook("conflictTakeOver", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		// The take-over's transaction: its first action replaces the old
		// entry on the condition that it is unchanged.
		if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && conflict.Load() &&
			tx.TransactItems[0].Put != nil && aws.ToString(tx.TransactItems[0].Put.ConditionExpression) == "#s = :s AND #p = :p" {
			return middleware.InitializeOutput{}, middleware.Metadata{}, &types.TransactionCanceledException{
				Message:             aws.String("Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]"),
				CancellationReasons: []types.CancellationReason{{Code: aws.String("None")}, {Code: aws.String("TransactionConflict")}},
			}
		}
		return next.HandleInitialize(ctx, in)
	}))
	ctx := dynamolocal.Context(t, testTimeout)
	putEntryAsEarlierRelease(t, s, "acct", "Contended", stateCreating, time.Now().Add(-time.Hour))
	conflict.Store(true)
	if _, err := s.CreateTable(ctx, "acct", "Contended"); err == nil || errors.Is(err, store.ErrTableExists) {
		t.Fatalf("CreateTable whose take-over was cancelled by a conflict: %v; want an error other than ErrTableExists", err)
	}
	conflict.Store(false)
	if _, err := s.CreateTable(ctx, "acct", "Contended"); err != nil {
		t.Fatalf("CreateTable after the conflict: %v", err)
	}
}
