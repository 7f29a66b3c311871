package dynamostore

import (
	"context"
	"fmt"
	"os"
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

// The tests that need DynamoDB run against DynamoDB Local (never a fake
// client): the shared instance of make test, or one started for this test
// binary. Without it they skip loudly, or fail under CI.
func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// testTimeout bounds each test's DynamoDB calls.
const testTimeout = 2 * time.Minute

// newTestStore returns a store with a table prefix of its own, so tests and
// concurrent test binaries sharing one DynamoDB Local never meet.
func newTestStore(t testing.TB, optFns ...func(*dynamodb.Options)) *Store {
	t.Helper()
	return newTestStoreWith(t, Options{}, optFns...)
}

func newTestStoreWith(t testing.TB, opts Options, optFns ...func(*dynamodb.Options)) *Store {
	t.Helper()
	client := dynamolocal.Client(t, optFns...)
	opts.TablePrefix = dynamolocal.UniqueName("tb") + "."
	// A local endpoint: New creates the catalog and the shared table.
	opts.Endpoint = dynamolocal.Endpoint(t)
	s, err := New(dynamolocal.Context(t, testTimeout), client, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// onAWS returns a store on s's tables that takes them as the stack's, as
// on AWS (Options.Endpoint ""): it neither creates nor re-creates them.
func onAWS(t testing.TB, s *Store, optFns ...func(*dynamodb.Options)) *Store {
	t.Helper()
	opts := s.opts
	opts.Endpoint = ""
	aws, err := New(dynamolocal.Context(t, testTimeout), dynamolocal.Client(t, optFns...), opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return aws
}

// testEnv is a store with one account and table, and helpers to drive it.
type testEnv struct {
	t       testing.TB
	s       *Store
	ctx     context.Context
	account string
	table   string
}

func newEnv(t testing.TB, s *Store) *testEnv {
	t.Helper()
	env := &testEnv{t: t, s: s, ctx: dynamolocal.Context(t, testTimeout), account: "acct", table: "Table1"}
	if _, err := s.CreateTable(env.ctx, env.account, env.table); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	return env
}

// newPlacementEnv is newEnv on a placement with the order index: the
// table as an earlier release created it, a DynamoDB table of its own
// (dynamolocal.CreatePerTable). Its entry has been looked up once, so it
// has its copies, as after the first request that names it.
func newPlacementEnv(t testing.TB, s *Store) *testEnv {
	t.Helper()
	env := &testEnv{t: t, s: s, ctx: dynamolocal.Context(t, testTimeout), account: "acct", table: "Table1"}
	createPlacement(t, s, env.account, env.table, true)
	if _, err := s.GetTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	return env
}

// createPlacement creates a table as an earlier release did, with the
// order index or without, and returns its DynamoDB table.
func createPlacement(t testing.TB, s *Store, account, table string, orderIndex bool) string {
	t.Helper()
	phys, err := dynamolocal.CreatePerTable(dynamolocal.Context(t, testTimeout), dynamolocal.Client(t),
		dynamolocal.PerTable{Prefix: s.opts.TablePrefix, Account: account, Table: table, OrderIndex: orderIndex})
	if err != nil {
		t.Fatal(err)
	}
	return phys
}

// Timestamps: unique and increasing, 100 ns aligned, as the service assigns.
var tsSeq atomic.Int64

func nextTS() time.Time {
	return testTime.Add(time.Duration(tsSeq.Add(1)) * 100 * time.Nanosecond)
}

type props = map[string]edm.Value

func newEntity(pk, rk string, p props) *model.Entity {
	if p == nil {
		p = props{}
	}
	return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: nextTS(), Properties: p}
}

func (env *testEnv) write(ops ...store.Op) error {
	return env.s.Write(env.ctx, env.account, env.table, ops)
}

func (env *testEnv) mustWrite(ops ...store.Op) {
	env.t.Helper()
	if err := env.write(ops...); err != nil {
		env.t.Fatalf("Write: %v", err)
	}
}

func (env *testEnv) insert(e *model.Entity) {
	env.t.Helper()
	env.mustWrite(store.Op{Kind: store.OpInsert, Entity: e})
}

func (env *testEnv) get(pk, rk string) *model.Entity {
	env.t.Helper()
	e, err := env.s.GetEntity(env.ctx, env.account, env.table, pk, rk)
	if err != nil {
		env.t.Fatalf("GetEntity(%q, %q): %v", pk, rk, err)
	}
	return e
}

// wantStored asserts the store holds exactly want.
func (env *testEnv) wantStored(want *model.Entity) {
	env.t.Helper()
	if diff := entityDiff(env.get(want.PartitionKey, want.RowKey), want); diff != "" {
		env.t.Fatalf("stored (%q, %q) differs: %s", want.PartitionKey, want.RowKey, diff)
	}
}

func entityDiff(got, want *model.Entity) string {
	var diffs []string
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey {
		diffs = append(diffs, fmt.Sprintf("keys (%q, %q)", got.PartitionKey, got.RowKey))
	}
	if !got.Timestamp.Equal(want.Timestamp) {
		diffs = append(diffs, fmt.Sprintf("Timestamp %v, want %v", got.Timestamp, want.Timestamp))
	}
	for name, w := range want.Properties {
		if g, ok := got.Properties[name]; !ok || !g.Equal(w) {
			diffs = append(diffs, fmt.Sprintf("property %q = %+v, want %+v", name, shortValue(g), shortValue(w)))
		}
	}
	for name := range got.Properties {
		if _, ok := want.Properties[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected property %q", name))
		}
	}
	return strings.Join(diffs, "; ")
}

func shortValue(v edm.Value) string {
	s := fmt.Sprintf("%s %q %d %v %g %v", v.Type, v.Str, v.Int, v.Bool, v.Float, v.Time)
	if len(v.Bin) > 0 {
		s += fmt.Sprintf(" %d bytes", len(v.Bin))
	}
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	return s
}

// rawItems returns every item of a partition as stored, overflow items
// included, read with the raw client.
func (env *testEnv) rawItems(pk string) []item {
	env.t.Helper()
	loc, err := env.s.locate(env.ctx, env.account, env.table)
	if err != nil {
		env.t.Fatal(err)
	}
	var items []item
	var start item
	for {
		out, err := env.s.db.Query(env.ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(loc.table),
			ConsistentRead:            aws.Bool(true),
			KeyConditionExpression:    aws.String("#pk = :pk"),
			ExpressionAttributeNames:  map[string]string{"#pk": attrPartitionKey},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(loc.pk(pk))},
			ExclusiveStartKey:         start,
		})
		if err != nil {
			env.t.Fatalf("raw Query: %v", err)
		}
		items = append(items, out.Items...)
		if out.LastEvaluatedKey == nil {
			return items
		}
		start = out.LastEvaluatedKey
	}
}

// initHook returns an SDK option that adds fn to the Initialize step of
// every call, after the SDK's own Initialize middleware (input validation
// among them). The step runs once per API call: retries happen below it.
func initHook(name string, fn func(context.Context, middleware.InitializeInput, middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error)) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc(name, fn), middleware.After)
		})
	}
}

// callCounter counts API calls (not HTTP attempts) per operation, through
// SDK middleware at the Initialize step, which runs once per call.
type callCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func newCallCounter() *callCounter { return &callCounter{calls: map[string]int{}} }

func (c *callCounter) option(o *dynamodb.Options) {
	initHook("countCalls", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		name := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", in.Parameters), "*dynamodb."), "Input")
		c.mu.Lock()
		c.calls[name]++
		c.mu.Unlock()
		return next.HandleInitialize(ctx, in)
	})(o)
}

// take returns the counts since the last take and resets them.
func (c *callCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := c.calls
	c.calls = map[string]int{}
	return got
}

func contextWithTimeout(env *testEnv, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(env.ctx, d)
}

// layouts are the two places the store keeps a table's entities, for the
// tests and benchmarks that run on both: the shared table (every table
// Create Table makes), or a placement, a DynamoDB table of its own (the
// tables of earlier releases).
var layouts = []struct {
	name   string
	newEnv func(testing.TB, *Store) *testEnv
}{{"Shared", newEnv}, {"Placement", newPlacementEnv}}

// testLoc is a placement's location for the unit tests of the item codec.
var testLoc = &location{table: "tbl"}
