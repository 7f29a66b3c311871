package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

// slowDeletes wraps the real DynamoDB Local client and adds the one thing
// DynamoDB Local does not model: a deleted table stays DELETING for a while
// (DynamoDB Local drops tables at once). Until finish, DescribeTable answers
// DELETING and CreateTable answers ResourceInUseException, as DynamoDB does.
type slowDeletes struct {
	API
	mu       sync.Mutex
	deleting map[string]bool
}

func (a *slowDeletes) DeleteTable(ctx context.Context, in *dynamodb.DeleteTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteTableOutput, error) {
	out, err := a.API.DeleteTable(ctx, in, optFns...)
	if err == nil {
		a.mu.Lock()
		a.deleting[aws.ToString(in.TableName)] = true
		a.mu.Unlock()
	}
	return out, err
}

func (a *slowDeletes) isDeleting(name *string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.deleting[aws.ToString(name)]
}

func (a *slowDeletes) CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error) {
	if a.isDeleting(in.TableName) {
		return nil, &types.ResourceInUseException{Message: aws.String("Attempt to change a resource which is still in use: Table is being deleted")}
	}
	return a.API.CreateTable(ctx, in, optFns...)
}

func (a *slowDeletes) DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	if a.isDeleting(in.TableName) {
		return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableName: in.TableName, TableStatus: types.TableStatusDeleting}}, nil
	}
	return a.API.DescribeTable(ctx, in, optFns...)
}

func (a *slowDeletes) finish() {
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.deleting)
}

func TestTableBeingDeleted(t *testing.T) {
	t.Parallel()
	api := &slowDeletes{API: dynamolocal.Client(t), deleting: map[string]bool{}}
	ctx := dynamolocal.Context(t, testTimeout)
	s, err := New(ctx, api, Options{TablePrefix: dynamolocal.UniqueName("tb") + "."})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, s)
	env.insert(newEntity("p", "r", props{"A": edm.NewInt32(1)}))
	if err := s.DeleteTable(ctx, env.account, env.table); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}
	for _, name := range []string{env.table, "TABLE1"} {
		if _, err := s.CreateTable(ctx, env.account, name); !errors.Is(err, store.ErrTableBeingDeleted) {
			t.Fatalf("CreateTable(%q) while DynamoDB deletes = %v; want ErrTableBeingDeleted", name, err)
		}
	}
	// The failed create leaves nothing behind: the name is not listed,
	// cannot be read, and is free once DynamoDB finishes.
	if _, err := s.GetTable(ctx, env.account, env.table); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("GetTable while deleting = %v; want ErrTableNotFound", err)
	}
	if err := s.DeleteTable(ctx, env.account, env.table); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("DeleteTable while deleting = %v; want ErrTableNotFound", err)
	}
	if page, err := s.QueryTables(ctx, env.account, store.TableQuery{Top: 10}); err != nil || len(page.Tables) != 0 {
		t.Errorf("QueryTables while deleting = %+v, %v; want none", page, err)
	}
	api.finish()
	info, err := s.CreateTable(ctx, env.account, "table1")
	if err != nil || info.Name != "table1" {
		t.Fatalf("CreateTable after the delete finished = %+v, %v", info, err)
	}
	if _, err := s.GetEntity(ctx, env.account, "table1", "p", "r"); !errors.Is(err, store.ErrEntityNotFound) {
		t.Errorf("re-created table holds old data: %v", err)
	}
}

// setCatalogState rewrites a table's catalog item as a crashed call would
// have left it.
func setCatalogState(t *testing.T, env *testEnv, state string, since time.Time) {
	t.Helper()
	_, err := env.s.db.UpdateItem(env.ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(env.s.opts.CatalogTable),
		Key:                      tableKey(env.account, env.table),
		UpdateExpression:         aws.String("SET #s = :s, #t = :t, #m = :m"),
		ExpressionAttributeNames: map[string]string{"#s": catState, "#t": catSince, "#m": catMarker},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s": str(state), ":t": str(since.UTC().Format(time.RFC3339Nano)), ":m": str("crashed"),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCrashedTableCalls(t *testing.T) {
	t.Parallel()
	t.Run("DeleteCrashedBeforeDynamoDBDelete", func(t *testing.T) {
		env := newEnv(t, newTestStore(t))
		env.insert(newEntity("p", "r", nil))
		setCatalogState(t, env, stateDeleting, time.Now())
		if _, err := env.s.GetTable(env.ctx, env.account, env.table); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("GetTable of a deleting table = %v; want ErrTableNotFound", err)
		}
		// CreateTable resumes the delete: the DynamoDB table was still there.
		if _, err := env.s.CreateTable(env.ctx, env.account, env.table); !errors.Is(err, store.ErrTableBeingDeleted) {
			t.Fatalf("CreateTable = %v; want ErrTableBeingDeleted", err)
		}
		// DynamoDB Local deletes at once, so the next create cleans up and
		// succeeds, with an empty table.
		if _, err := env.s.CreateTable(env.ctx, env.account, env.table); err != nil {
			t.Fatalf("CreateTable after the resumed delete: %v", err)
		}
		if _, err := env.s.GetEntity(env.ctx, env.account, env.table, "p", "r"); !errors.Is(err, store.ErrEntityNotFound) {
			t.Errorf("old entity survived: %v", err)
		}
	})
	t.Run("CreateInProgress", func(t *testing.T) {
		// Another create claimed the name and has not created its
		// DynamoDB table yet. (A claim whose table is ACTIVE is finished
		// by whoever finds it: TestHalfCreatedTable.)
		env := newEnv(t, newTestStore(t))
		phys, err := env.s.physicalName(env.account, env.table)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.s.db.DeleteTable(env.ctx, &dynamodb.DeleteTableInput{TableName: aws.String(phys)}); err != nil {
			t.Fatal(err)
		}
		setCatalogState(t, env, stateCreating, time.Now())
		if _, err := env.s.GetTable(env.ctx, env.account, env.table); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("GetTable of a creating table = %v; want ErrTableNotFound", err)
		}
		if err := env.s.DeleteTable(env.ctx, env.account, env.table); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("DeleteTable of a creating table = %v; want ErrTableNotFound", err)
		}
		if _, err := env.s.CreateTable(env.ctx, env.account, env.table); !errors.Is(err, store.ErrTableExists) {
			t.Errorf("CreateTable while another create runs = %v; want ErrTableExists", err)
		}
	})
	t.Run("CreateCrashedTakenOver", func(t *testing.T) {
		env := newEnv(t, newTestStore(t))
		env.insert(newEntity("p", "r", nil))
		setCatalogState(t, env, stateCreating, time.Now().Add(-time.Hour))
		info, err := env.s.CreateTable(env.ctx, env.account, "TABLE1")
		if err != nil || info.Name != "TABLE1" {
			t.Fatalf("CreateTable over a stale claim = %+v, %v", info, err)
		}
		got, err := env.s.GetTable(env.ctx, env.account, env.table)
		if err != nil || got.Name != "TABLE1" {
			t.Errorf("GetTable = %+v, %v; want the new name", got, err)
		}
	})
}

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
	s := newSharedStore(t, Options{}, calls.option)
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
