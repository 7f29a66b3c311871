package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// catalogReads records the catalog partition key of every GetItem the store
// sends to the catalog table.
type catalogReads struct {
	mu   sync.Mutex
	keys map[string]int
}

func (c *catalogReads) option(o *dynamodb.Options) {
	initHook("catalogReads", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if get, ok := in.Parameters.(*dynamodb.GetItemInput); ok && strings.HasSuffix(aws.ToString(get.TableName), "catalog") {
			c.mu.Lock()
			if c.keys == nil {
				c.keys = map[string]int{}
			}
			c.keys[stringAttr(get.Key, catAccount)]++
			c.mu.Unlock()
		}
		return next.HandleInitialize(ctx, in)
	})(o)
}

func (c *catalogReads) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.keys
	c.keys = nil
	return got
}

// TestLookupsSpreadOverCopies: with ConfirmTable (the Lambda functions),
// each entity operation reads its table's entry from one of its copies,
// each under a partition key of its own: no catalog partition key carries
// more than a tenth of a table's operations (DynamoDB serves 3,000 reads a
// second from one), the account's partition none of them, and two tables
// share none.
func TestLookupsSpreadOverCopies(t *testing.T) {
	t.Parallel()
	reads := &catalogReads{}
	s := newTestStoreWith(t, Options{ConfirmTable: true}, reads.option)
	env := newEnv(t, s)
	if _, err := s.CreateTable(env.ctx, env.account, "Second"); err != nil {
		t.Fatal(err)
	}
	reads.take()
	const ops = 400
	for i := range ops {
		e := newEntity("p"+strconv.Itoa(i%200), "r", nil)
		if i < 200 {
			env.insert(e)
		} else {
			env.get(e.PartitionKey, e.RowKey)
		}
	}
	first := reads.take()
	for i := range 100 {
		if _, err := s.GetEntity(env.ctx, env.account, "Second", "p", strconv.Itoa(i)); !errors.Is(err, store.ErrEntityNotFound) {
			t.Fatal(err)
		}
	}
	second := reads.take()

	account := encodeKey(env.account)
	total, hottest := 0, 0
	for key, n := range first {
		total += n
		hottest = max(hottest, n)
		if key == account {
			t.Errorf("%d look-ups read the account's partition", n)
		}
		if _, shared := second[key]; shared {
			t.Errorf("partition key %q carries look-ups of two tables", key)
		}
	}
	if total != ops {
		t.Errorf("%d catalog reads for %d operations; want one each", total, ops)
	}
	if len(first) != catalogCopies || hottest*10 > ops {
		t.Errorf("look-ups over %d keys, the hottest with %d of %d; want %d keys, none over a tenth", len(first), hottest, ops, catalogCopies)
	}
	t.Logf("%d look-ups over %d partition keys; hottest %d (%.1f%%)", ops, len(first), hottest, 100*float64(hottest)/ops)
}

// putOldEntry writes a table's catalog entry as the release before copies
// wrote it (Create Table's PutItem then): no Rev, no copies.
func putOldEntry(t *testing.T, s *Store, account, table string) string {
	t.Helper()
	id := newGen()
	it := tableKey(account, table)
	it[catName] = str(table)
	it[catState] = str(stateActive)
	it[catPhysical] = str(s.opts.SharedTable)
	it[catID] = str(id)
	it[catMarker] = str(newGen())
	it[catSince] = str(time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := s.db.PutItem(dynamolocal.Context(t, testTimeout), &dynamodb.PutItemInput{TableName: aws.String(s.opts.CatalogTable), Item: it}); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestCopiesOfEarlierEntries: a table created by the release before copies
// existed is served: its first look-up reads the entry and writes its
// copies, later ones read a copy only; its entities are where that
// release put them; deleting it makes it missing at once for every process.
func TestCopiesOfEarlierEntries(t *testing.T) {
	t.Parallel()
	counter := newCallCounter()
	s := newTestStoreWith(t, Options{ConfirmTable: true}, counter.option)
	ctx := dynamolocal.Context(t, testTimeout)
	other := sibling(t, s)
	id := putOldEntry(t, s, "acct", "Earlier")
	old := &location{table: s.opts.SharedTable, prefix: sharedPrefix("acct", id)}
	its, err := buildItems(old, newEntity("p", "r", props{"V": edm.NewInt32(1)}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.opts.SharedTable), Item: its.main}); err != nil {
		t.Fatal(err)
	}

	counter.take()
	if _, err := s.GetEntity(ctx, "acct", "Earlier", "p", "r"); err != nil {
		t.Fatalf("entity of a table from the earlier release: %v", err)
	}
	if got := counter.take(); got["GetItem"] != 3 || got["TransactWriteItems"] != 1 {
		t.Errorf("first look-up: %v; want a copy missed, the entry and the entity read, and the copies written", got)
	}
	if _, err := other.GetEntity(ctx, "acct", "Earlier", "p", "r"); err != nil {
		t.Fatal(err)
	}
	if got := counter.take(); len(got) != 0 {
		t.Errorf("another store's calls went through this one's client: %v", got)
	}
	s.cache.drop("acct", "Earlier")
	if _, err := s.GetEntity(ctx, "acct", "Earlier", "p", "r"); err != nil {
		t.Fatal(err)
	}
	if got := counter.take(); got["GetItem"] != 2 || len(got) != 1 {
		t.Errorf("look-up once copies exist: %v; want one copy and the entity read", got)
	}
	if err := s.DeleteTable(ctx, "acct", "Earlier"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.GetEntity(ctx, "acct", "Earlier", "p", "r"); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("another process right after the delete: %v; want ErrTableNotFound", err)
	}
}

// TestCopyOutOfDateIsNotTrusted: a copy past its time is not read as the
// entry, so an entry changed by a tool that does not write copies (the
// release before them, during its upgrade) is seen within copyLifetime
// plus copyJitter; and copies are renewed only from an entry as it still
// is (a renewal that read the entry before a change writes nothing).
func TestCopyOutOfDateIsNotTrusted(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	env := newEnv(t, s)
	ctx := env.ctx
	entry, err := s.readEntry(ctx, "test", env.account, env.table)
	if err != nil {
		t.Fatal(err)
	}
	// An earlier release deletes the table: the entry, not its copies.
	if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.opts.CatalogTable),
		Key:                       tableKey(env.account, env.table),
		UpdateExpression:          aws.String("SET #s = :deleted, #d = :at"),
		ExpressionAttributeNames:  map[string]string{"#s": catState, "#d": catDeletedAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":deleted": str(stateDeleted), ":at": str(formatDeletedAt(time.Now()))},
	}); err != nil {
		t.Fatal(err)
	}
	// A renewal from the entry as read before: refused, copies unchanged.
	if err := s.renewCopies(ctx, env.account, env.table, entry); err == nil {
		t.Fatal("renewCopies from an entry changed since: nil error")
	}
	s.cache.drop(env.account, env.table)
	if _, err := s.GetTable(ctx, env.account, env.table); err != nil {
		t.Fatalf("GetTable with current copies: %v (the copies still say active)", err)
	}
	// The copies' time passes.
	for n := range catalogCopies {
		if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(s.opts.CatalogTable),
			Key:                       copyKey(env.account, env.table, n),
			UpdateExpression:          aws.String("SET #u = :past"),
			ExpressionAttributeNames:  map[string]string{"#u": catUntil},
			ExpressionAttributeValues: map[string]types.AttributeValue{":past": &types.AttributeValueMemberN{Value: strconv.FormatInt(time.Now().Unix()-1, 10)}},
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.GetTable(ctx, env.account, env.table); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("GetTable once the copies' time passed: %v; want ErrTableNotFound", err)
	}
	if _, err := s.GetEntity(ctx, env.account, env.table, "p", "r"); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("GetEntity once the copies' time passed: %v; want ErrTableNotFound", err)
	}
}

// TestTableACLThroughCopies: stored access policies set in one process are
// read by another from the copies (every request naming a policy reads
// them), and removed the same way.
func TestTableACLThroughCopies(t *testing.T) {
	t.Parallel()
	reads := &catalogReads{}
	s := newTestStore(t)
	env := newEnv(t, s)
	other := sibling(t, s, reads.option)
	acl := []model.SignedIdentifier{{ID: "readers", Permission: "r", Expiry: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}
	if err := s.SetTableACL(env.ctx, env.account, env.table, acl); err != nil {
		t.Fatal(err)
	}
	info, err := other.GetTable(env.ctx, env.account, env.table)
	if err != nil || len(info.ACL) != 1 || info.ACL[0].ID != "readers" {
		t.Fatalf("GetTable in another process: %+v, %v", info, err)
	}
	if err := s.SetTableACL(env.ctx, env.account, env.table, nil); err != nil {
		t.Fatal(err)
	}
	if info, err := other.GetTable(env.ctx, env.account, env.table); err != nil || len(info.ACL) != 0 {
		t.Fatalf("GetTable after the policies were removed: %+v, %v", info, err)
	}
	for key := range reads.take() {
		if !strings.HasPrefix(key, copyAccountPrefix) {
			t.Errorf("GetTable read catalog partition %q; want copies only", key)
		}
	}
	if err := s.SetTableACL(env.ctx, env.account, "Missing", acl); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("SetTableACL of a missing table: %v", err)
	}
}

// TestPurgeRemovesTombstones: once the purge of a deleted table is done, its
// tombstone and the tombstone's copies are gone from the catalog; a name
// created again before the purge ends keeps its entry and copies.
func TestPurgeRemovesTombstones(t *testing.T) {
	t.Parallel()
	s := newTestStoreWith(t, Options{PurgeGrace: time.Nanosecond})
	env := newEnv(t, s)
	if _, err := s.CreateTable(env.ctx, env.account, "Again"); err != nil {
		t.Fatal(err)
	}
	env.insert(newEntity("p", "r", nil))
	for _, name := range []string{env.table, "Again"} {
		if err := s.DeleteTable(env.ctx, env.account, name); err != nil {
			t.Fatal(err)
		}
	}
	waitRecreate(t, &testEnv{t: t, s: s, ctx: env.ctx, account: env.account, table: "Again"})
	rep, err := s.Purge(env.ctx)
	if err != nil || rep.Tables != 2 {
		t.Fatalf("Purge = %+v, %v; want both tables", rep, err)
	}
	catalogItems := func(account, table string) (entry item, copies int) {
		t.Helper()
		entry, err := s.readEntry(env.ctx, "test", account, table)
		if err != nil {
			t.Fatal(err)
		}
		for n := range catalogCopies {
			out, err := s.db.GetItem(env.ctx, &dynamodb.GetItemInput{TableName: aws.String(s.opts.CatalogTable), Key: copyKey(account, table, n), ConsistentRead: aws.Bool(true)})
			if err != nil {
				t.Fatal(err)
			}
			if out.Item != nil {
				copies++
			}
		}
		return entry, copies
	}
	if entry, copies := catalogItems(env.account, env.table); entry != nil || copies != 0 {
		t.Errorf("after the purge: entry %v and %d copies of the deleted table; want none", entry, copies)
	}
	if entry, copies := catalogItems(env.account, "Again"); stringAttr(entry, catState) != stateActive || copies != catalogCopies {
		t.Errorf("the table created again: entry %v and %d copies; want it active with all its copies", entry, copies)
	}
}

// TestListingCostWithDeletedNames: listing an account's tables reads the
// same number of catalog items after thousands of names were deleted and
// purged as before; before the purge, the tombstones are read (and
// skipped).
func TestListingCostWithDeletedNames(t *testing.T) {
	t.Parallel()
	deleted := 200
	if n, err := strconv.Atoi(os.Getenv("TABLEBRIDGE_DELETED_NAMES")); err == nil && n > 0 {
		deleted = n // 10,000 for a long run
	}
	scanned := &scannedCounter{}
	s := newTestStoreWith(t, Options{PurgeGrace: time.Nanosecond}, scanned.option)
	ctx := dynamolocal.Context(t, 2*time.Minute+time.Duration(deleted)*100*time.Millisecond)
	const live = 5
	for i := range live {
		if _, err := s.CreateTable(ctx, "acct", fmt.Sprintf("Live%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	list := func() int {
		t.Helper()
		scanned.take()
		page, err := s.QueryTables(ctx, "acct", store.TableQuery{})
		if err != nil || len(page.Tables) != live {
			t.Fatalf("QueryTables = %d tables, %v; want %d", len(page.Tables), err, live)
		}
		return scanned.take()
	}
	before := list()
	deleteNames(t, s, ctx, "acct", deleted)
	withTombstones := list()
	rep, err := s.Purge(ctx)
	if err != nil || rep.Tables != deleted {
		t.Fatalf("Purge = %+v, %v; want %d tables", rep, err, deleted)
	}
	after := list()
	t.Logf("catalog items read to list %d tables: %d before, %d with %d tombstones, %d after their purge", live, before, withTombstones, deleted, after)
	if after != before || withTombstones <= before {
		t.Errorf("items read: %d before, %d with tombstones, %d after the purge; want the same before and after", before, withTombstones, after)
	}
}

// scannedCounter adds up the items DynamoDB read (ScannedCount) for the
// store's Queries of the catalog table.
type scannedCounter struct {
	mu sync.Mutex
	n  int
}

func (c *scannedCounter) option(o *dynamodb.Options) {
	initHook("scannedCounter", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleInitialize(ctx, in)
		if q, ok := in.Parameters.(*dynamodb.QueryInput); ok && strings.HasSuffix(aws.ToString(q.TableName), "catalog") && err == nil {
			c.mu.Lock()
			c.n += int(out.Result.(*dynamodb.QueryOutput).ScannedCount)
			c.mu.Unlock()
		}
		return out, md, err
	})(o)
}

func (c *scannedCounter) take() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = 0
	return n
}

// deleteNames creates and deletes n tables in account, 16 at a time.
func deleteNames(t *testing.T, s *Store, ctx context.Context, account string, n int) {
	t.Helper()
	names := make(chan string)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for name := range names {
				if _, err := s.CreateTable(ctx, account, name); err != nil {
					errs <- err
					return
				}
				if err := s.DeleteTable(ctx, account, name); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	start := time.Now()
feed:
	for i := range n {
		select {
		case names <- fmt.Sprintf("Gone%05d", i):
		case err := <-errs:
			t.Error(err)
			break feed
		}
	}
	close(names)
	wg.Wait()
	t.Logf("created and deleted %d tables in %v", n, time.Since(start).Round(time.Millisecond))
}

// TestCopyKeysMatchIAM: the copies' partition keys are those the functions'
// IAM statement on copies names (deploy.CatalogCopyKeys, a StringLike
// pattern of dynamodb:LeadingKeys), and no entry, purge item or service
// document of the catalog is.
func TestCopyKeysMatchIAM(t *testing.T) {
	prefix, wild := strings.CutSuffix(deploy.CatalogCopyKeys, "*")
	if !wild {
		t.Fatalf("deploy.CatalogCopyKeys = %q: want a prefix and '*'", deploy.CatalogCopyKeys)
	}
	for n := range catalogCopies {
		if key := stringAttr(copyKey("acct", "Table", n), catAccount); !strings.HasPrefix(key, prefix) {
			t.Errorf("copy %d's key %q is not under %s", n, key, deploy.CatalogCopyKeys)
		}
	}
	for _, it := range []item{tableKey("acct", "Table"), catalogKey(purgeAccount, "k"), catalogKey("acct", serviceKey), catalogKey(probeAccount, probeAccount)} {
		if key := stringAttr(it, catAccount); strings.HasPrefix(key, prefix) {
			t.Errorf("catalog key %q is under %s, which look-ups may write", key, deploy.CatalogCopyKeys)
		}
	}
}

// TestThrottledCopyReadsAnother: when DynamoDB throttles one copy's key
// (past the SDK's own retries), a look-up reads another copy, whose key has
// its own capacity, rather than failing the operation: with ConfirmTable
// (the Lambda functions) a failed confirmation of an applied write would
// answer 500.
func TestThrottledCopyReadsAnother(t *testing.T) {
	t.Parallel()
	var throttledKey string
	var mu sync.Mutex
	throttled, served := 0, 0
	s := newTestStoreWith(t, Options{ConfirmTable: true}, initHook("throttleOneCopy", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if get, ok := in.Parameters.(*dynamodb.GetItemInput); ok && strings.HasSuffix(aws.ToString(get.TableName), "catalog") {
			mu.Lock()
			defer mu.Unlock()
			if key := stringAttr(get.Key, catAccount); throttledKey != "" && key == throttledKey {
				throttled++
				return middleware.InitializeOutput{}, middleware.Metadata{}, &types.ThrottlingException{Message: aws.String("Throughput exceeds the current capacity for one or more global secondary indexes.")}
			}
			served++
		}
		return next.HandleInitialize(ctx, in)
	}))
	env := newEnv(t, s)
	mu.Lock()
	throttledKey = stringAttr(copyKey(env.account, env.table, 5), catAccount)
	mu.Unlock()
	const ops = 2 * catalogCopies
	for i := range ops {
		e := newEntity("p", strconv.Itoa(i), nil)
		env.insert(e)
		env.get(e.PartitionKey, e.RowKey)
	}
	mu.Lock()
	defer mu.Unlock()
	if throttled == 0 || served < 2*ops {
		t.Errorf("%d reads of the throttled copy, %d of others; want some of the throttled one and every operation served by another", throttled, served)
	}
}
