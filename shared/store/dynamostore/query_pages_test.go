package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// slowSecondQuery lets the first Query through and times out every later
// one, as an overloaded DynamoDB would.
type slowSecondQuery struct {
	API
	queries atomic.Int64
}

func (a *slowSecondQuery) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if a.queries.Add(1) > 1 {
		return nil, fmt.Errorf("operation error DynamoDB: Query: %w", context.DeadlineExceeded)
	}
	return a.API.Query(ctx, in, optFns...)
}

// TestQueryTimeoutAfterProgressReturnsPartialPage: a read that times out
// after a page has made progress ends the page with a continuation; one that
// times out before any progress fails the query.
func TestQueryTimeoutAfterProgressReturnsPartialPage(t *testing.T) {
	t.Parallel()
	slow := &slowSecondQuery{API: dynamolocal.Client(t)}
	s, err := New(dynamolocal.Context(t, testTimeout), slow, Options{TablePrefix: dynamolocal.UniqueName("tb") + ".", Endpoint: dynamolocal.Endpoint(t)})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, s)
	for i := range 30 {
		env.insert(newEntity("p", fmt.Sprintf("r%02d", i), nil))
	}
	// A selective filter makes the pager read in several small requests.
	q := store.Query{
		Keys:  model.KeyRange{PartitionKey: model.Bounds{Lower: &model.Bound{Value: "p", Inclusive: true}, Upper: &model.Bound{Value: "p", Inclusive: true}}},
		Match: func(e *model.Entity) bool { return e.RowKey == "r00" || e.RowKey == "r29" },
		Top:   2,
	}
	slow.queries.Store(0)
	page, err := s.QueryEntities(env.ctx, env.account, env.table, q)
	if err != nil {
		t.Fatalf("QueryEntities: %v", err)
	}
	if page.Next == nil || len(page.Entities) > 1 {
		t.Fatalf("page = %d entities, next %v; want a short page with a continuation", len(page.Entities), page.Next)
	}

	slow.queries.Store(1) // the very first read now times out
	if _, err := s.QueryEntities(env.ctx, env.account, env.table, q); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("QueryEntities without progress = %v, want ErrUnavailable", err)
	}
}

// TestQueryExactTopHasNoTrailingPage: a partition of exactly Top entities
// comes back in one page without a continuation, although DynamoDB marks a
// read that stops at its Limit with a LastEvaluatedKey.
func TestQueryExactTopHasNoTrailingPage(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	for i := range 25 {
		env.insert(newEntity("p", fmt.Sprintf("r%02d", i), nil))
	}
	exact := model.Bounds{Lower: &model.Bound{Value: "p", Inclusive: true}, Upper: &model.Bound{Value: "p", Inclusive: true}}
	for _, tc := range []struct {
		name     string
		keys     model.KeyRange
		top      int
		wantNext bool
	}{
		{"PartitionExactTop", model.KeyRange{PartitionKey: exact}, 25, false},
		{"PartitionShortOfTop", model.KeyRange{PartitionKey: exact}, 24, true},
		{"ScanExactTop", model.KeyRange{}, 25, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{Keys: tc.keys, Top: tc.top})
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Entities) != tc.top || (page.Next != nil) != tc.wantNext {
				t.Fatalf("page of %d entities, next %v; want %d and next=%v", len(page.Entities), page.Next, tc.top, tc.wantNext)
			}
		})
	}
}
