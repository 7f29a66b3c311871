package tables

import (
	"context"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// recordingStore notes the Query each QueryEntities receives.
type recordingStore struct {
	store.Store
	queries []store.Query
}

func (r *recordingStore) QueryEntities(ctx context.Context, account, table string, q store.Query) (store.Page, error) {
	r.queries = append(r.queries, q)
	return r.Store.QueryEntities(ctx, account, table, q)
}

// TestQueryPushesDownScopeKeys: a SAS token's key range narrows what the
// store reads, together with the filter's; when the two cannot overlap the
// store reads nothing.
func TestQueryPushesDownScopeKeys(t *testing.T) {
	t.Parallel()
	base := newBoltService(t, time.Now)
	rec := &recordingStore{Store: base.store}
	s, err := New(rec, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.CreateTable(ctx, Scope{Account: "acct"}, "scoped"); err != nil {
		t.Fatal(err)
	}
	bound := func(v string) *model.Bound { return &model.Bound{Value: v, Inclusive: true} }
	keys := model.KeyRange{PartitionKey: model.Bounds{Lower: bound("b"), Upper: bound("c")}}
	sc := Scope{Account: "acct", Keys: &keys, EntityAllowed: func(pk, rk string) bool { return keys.Contains(pk, rk) }}

	if _, err := s.QueryEntities(ctx, sc, QueryInput{Table: "scoped", Filter: "RowKey ge 'x'"}); err != nil {
		t.Fatal(err)
	}
	if len(rec.queries) != 1 {
		t.Fatalf("store queried %d times, want 1", len(rec.queries))
	}
	got := rec.queries[0].Keys
	if got.PartitionKey.Lower == nil || got.PartitionKey.Lower.Value != "b" || got.PartitionKey.Upper == nil ||
		got.PartitionKey.Upper.Value != "c" || got.RowKey.Lower == nil || got.RowKey.Lower.Value != "x" {
		t.Fatalf("store got keys %+v, want PartitionKey b..c and RowKey >= x", got)
	}

	if _, err := s.QueryEntities(ctx, sc, QueryInput{Table: "scoped", Filter: "PartitionKey eq 'z'"}); err != nil {
		t.Fatal(err)
	}
	if len(rec.queries) != 1 {
		t.Fatal("a filter outside the token's range still read the store")
	}
	if _, err := s.QueryEntities(ctx, sc, QueryInput{Table: "nosuchtable", Filter: "PartitionKey eq 'z'"}); err == nil {
		t.Fatal("a query of a missing table that matches nothing did not report TableNotFound")
	}
}
