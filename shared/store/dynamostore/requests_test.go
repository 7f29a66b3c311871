package dynamostore

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestRequestsPerOperation pins the cost model: exactly one DynamoDB call per
// single-entity operation, with no read before a write, and one
// TransactWriteItems per multi-op Write, whether the op succeeds or fails,
// in the shared table and in a placement, once the table's catalog look-up
// is cached (one GetItem per table and process per CatalogCacheTTL, pinned
// by the ColdCache step).
func TestRequestsPerOperation(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) { testRequestsPerOperation(t, layout.newEnv, layout.name == "Placement") })
	}
}

func testRequestsPerOperation(t *testing.T, newEnv func(testing.TB, *Store) *testEnv, withoutIndex bool) {
	counter := newCallCounter()
	s := newTestStoreWith(t, Options{CatalogCacheTTL: time.Hour}, counter.option)
	env := newEnv(t, s)
	// plain's table is a placement without the order index.
	plain := &testEnv{t: t, s: s, ctx: env.ctx, account: env.account, table: "Plain"}
	createPlacement(t, s, plain.account, plain.table, false)
	for _, e := range []*testEnv{env, plain} {
		// The look-ups, cached from here on (an earlier release's entry
		// gets its copies now).
		if _, err := e.s.GetEntity(e.ctx, e.account, e.table, "p", "none"); !errors.Is(err, store.ErrEntityNotFound) {
			t.Fatal(err)
		}
	}
	counter.take()

	// cur is the stored version of ("p", "e"), kept up to date by the steps.
	cur := newEntity("p", "e", props{"Size": edm.NewInt32(1), "Name": edm.NewString("n")})
	write := func(op store.Op) func() error {
		return func() error {
			if err := env.write(op); err != nil {
				return err
			}
			if op.Kind == store.OpMerge && op.Entity.PartitionKey == cur.PartitionKey && op.Entity.RowKey == cur.RowKey {
				merged := cur.Clone()
				maps.Copy(merged.Properties, op.Entity.Properties)
				merged.Timestamp = op.Entity.Timestamp
				cur = merged
			} else if op.Entity.RowKey == cur.RowKey && op.Kind != store.OpDelete {
				cur = op.Entity
			}
			return nil
		}
	}
	// Each step builds its op when it runs, so it sees cur as left by the
	// steps before it.
	type step struct {
		name    string
		run     func() error
		want    map[string]int
		wantErr error
	}
	batches := 0
	batch := func(n int, fail bool) func() error {
		return func() error {
			batches++
			var ops []store.Op
			for i := range n {
				ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity("batch", fmt.Sprintf("b%d-%03d", batches, i), nil)})
			}
			if fail {
				ops[n-1] = store.Op{Kind: store.OpInsert, Entity: newEntity(cur.PartitionKey, cur.RowKey, nil)}
			}
			return env.write(ops...)
		}
	}
	steps := []step{
		{"Insert", func() error { return write(store.Op{Kind: store.OpInsert, Entity: cur})() }, map[string]int{"PutItem": 1}, nil},
		{"GetEntity", func() error { _, err := env.s.GetEntity(env.ctx, env.account, env.table, "p", "e"); return err }, map[string]int{"GetItem": 1}, nil},
		{"GetEntityMissing", func() error { _, err := env.s.GetEntity(env.ctx, env.account, env.table, "p", "none"); return err }, map[string]int{"GetItem": 1}, store.ErrEntityNotFound},
		{"InsertExisting", func() error { return env.write(store.Op{Kind: store.OpInsert, Entity: newEntity("p", "e", nil)}) }, map[string]int{"PutItem": 1}, store.ErrEntityExists},
		{"UpdateIfMatch", func() error {
			return write(store.Op{Kind: store.OpReplace, Entity: newEntity("p", "e", props{"Count": edm.NewInt64(2)}), Cond: store.CondTimestamp, Timestamp: cur.Timestamp})()
		}, map[string]int{"PutItem": 1}, nil},
		{"UpdateStale", func() error {
			return env.write(store.Op{Kind: store.OpReplace, Entity: newEntity("p", "e", nil), Cond: store.CondTimestamp, Timestamp: testTime})
		}, map[string]int{"PutItem": 1}, store.ErrConditionFailed},
		{"UpdateStarMissing", func() error {
			return env.write(store.Op{Kind: store.OpReplace, Entity: newEntity("p", "none", nil), Cond: store.CondExists})
		}, map[string]int{"PutItem": 1}, store.ErrEntityNotFound},
		{"UpdateStar", func() error {
			return write(store.Op{Kind: store.OpReplace, Entity: newEntity("p", "e", props{"Size": edm.NewDouble(2.5)}), Cond: store.CondExists})()
		}, map[string]int{"PutItem": 1}, nil},
		{"InsertOrReplace", func() error {
			return write(store.Op{Kind: store.OpReplace, Entity: newEntity("p", "e", props{"A": edm.NewBoolean(true)})})()
		}, map[string]int{"PutItem": 1}, nil},
		{"InsertOrReplaceAbsent", func() error { return env.write(store.Op{Kind: store.OpReplace, Entity: newEntity("p", "upsert", nil)}) }, map[string]int{"PutItem": 1}, nil},
		{"MergeIfMatch", func() error {
			return write(store.Op{Kind: store.OpMerge, Entity: newEntity("p", "e", props{"Name": edm.NewString("m")}), Cond: store.CondTimestamp, Timestamp: cur.Timestamp})()
		}, map[string]int{"UpdateItem": 1}, nil},
		{"MergeStale", func() error {
			return env.write(store.Op{Kind: store.OpMerge, Entity: newEntity("p", "e", nil), Cond: store.CondTimestamp, Timestamp: testTime})
		}, map[string]int{"UpdateItem": 1}, store.ErrConditionFailed},
		{"MergeStar", func() error {
			return write(store.Op{Kind: store.OpMerge, Entity: newEntity("p", "e", props{"B": edm.NewInt32(3)}), Cond: store.CondExists})()
		}, map[string]int{"UpdateItem": 1}, nil},
		{"MergeStarMissing", func() error {
			return env.write(store.Op{Kind: store.OpMerge, Entity: newEntity("p", "none", nil), Cond: store.CondExists})
		}, map[string]int{"UpdateItem": 1}, store.ErrEntityNotFound},
		{"InsertOrMerge", func() error {
			return write(store.Op{Kind: store.OpMerge, Entity: newEntity("p", "e", props{"C": edm.NewGuid("00000000-0000-0000-0000-000000000001")})})()
		}, map[string]int{"UpdateItem": 1}, nil},
		{"InsertOrMergeAbsent", func() error {
			return env.write(store.Op{Kind: store.OpMerge, Entity: newEntity("p", "merge-upsert", props{"X": edm.NewInt32(1)})})
		}, map[string]int{"UpdateItem": 1}, nil},
		{"DeleteStale", func() error {
			return env.write(store.Op{Kind: store.OpDelete, Entity: newEntity("p", "e", nil), Cond: store.CondTimestamp, Timestamp: testTime})
		}, map[string]int{"DeleteItem": 1}, store.ErrConditionFailed},
		{"DeleteMissing", func() error { return env.write(store.Op{Kind: store.OpDelete, Entity: newEntity("p", "none", nil)}) }, map[string]int{"DeleteItem": 1}, store.ErrEntityNotFound},
		{"QueryPartition", func() error {
			_, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{Keys: pkRange("p"), Top: 1000})
			return err
		}, map[string]int{"Query": 1}, nil},
		{"QueryAcrossPartitions", func() error {
			_, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{Top: 1000})
			return err
		}, map[string]int{"Query": orderShards}, nil},
		// Without the index: one shard's Query fails, a DescribeTable
		// confirms the index is missing (not the message), and then the
		// table is Scanned, without trying the index again, until
		// noIndexRecheck.
		{"QueryAcrossPartitionsNoIndex", func() error {
			_, err := plain.s.QueryEntities(plain.ctx, plain.account, plain.table, store.Query{Top: 1000})
			return err
		}, map[string]int{"Query": 1, "DescribeTable": 1, "Scan": 1}, nil},
		{"QueryAcrossPartitionsNoIndexAgain", func() error {
			_, err := plain.s.QueryEntities(plain.ctx, plain.account, plain.table, store.Query{Top: 1000})
			return err
		}, map[string]int{"Scan": 1}, nil},
		{"Batch3", batch(3, false), map[string]int{"TransactWriteItems": 1}, nil},
		{"Batch100", batch(100, false), map[string]int{"TransactWriteItems": 1}, nil},
		{"BatchFailing", batch(5, true), map[string]int{"TransactWriteItems": 1}, store.ErrEntityExists},
		{"DeleteIfMatch", func() error {
			return env.write(store.Op{Kind: store.OpDelete, Entity: newEntity("p", "e", nil), Cond: store.CondTimestamp, Timestamp: cur.Timestamp})
		}, map[string]int{"DeleteItem": 1}, nil},
		{"GetTable", func() error { _, err := env.s.GetTable(env.ctx, env.account, env.table); return err }, map[string]int{"GetItem": 1}, nil},
		{"ColdCache", func() error {
			env.s.cache.drop(env.account, env.table)
			_, err := env.s.GetEntity(env.ctx, env.account, env.table, "p", "merge-upsert")
			return err
		}, map[string]int{"GetItem": 2}, nil},
		// No control plane: one catalog transaction each (the entry and
		// its copies), no waiting.
		{"CreateTable", func() error { _, err := env.s.CreateTable(env.ctx, env.account, "Another"); return err }, map[string]int{"TransactWriteItems": 1}, nil},
		{"DeleteTable", func() error { return env.s.DeleteTable(env.ctx, env.account, "Another") }, map[string]int{"GetItem": 1, "TransactWriteItems": 1}, nil},
		{"EntityOfDeletedTable", func() error { _, err := env.s.GetEntity(env.ctx, env.account, "Another", "p", "e"); return err }, map[string]int{"GetItem": 1}, store.ErrTableNotFound},
	}
	for _, st := range steps {
		if !withoutIndex && strings.Contains(st.name, "NoIndex") {
			continue // once is enough
		}
		t.Run(st.name, func(t *testing.T) {
			counter.take()
			err := st.run()
			got := counter.take()
			if st.wantErr == nil && err != nil {
				t.Fatalf("error %v", err)
			}
			if st.wantErr != nil && !errors.Is(err, st.wantErr) {
				t.Fatalf("error %v; want %v", err, st.wantErr)
			}
			if !maps.Equal(got, st.want) {
				t.Errorf("DynamoDB calls %v; want %v", got, st.want)
			}
		})
	}
	t.Run("StateAfterSteps", func(t *testing.T) {
		_, err := env.s.GetEntity(env.ctx, env.account, env.table, "p", "e")
		if !errors.Is(err, store.ErrEntityNotFound) {
			t.Errorf("entity after DeleteIfMatch: %v", err)
		}
		env.wantStored(&model.Entity{PartitionKey: "p", RowKey: "merge-upsert", Timestamp: env.get("p", "merge-upsert").Timestamp, Properties: props{"X": edm.NewInt32(1)}})
	})
}

func pkRange(pk string) model.KeyRange {
	b := &model.Bound{Value: pk, Inclusive: true}
	return model.KeyRange{PartitionKey: model.Bounds{Lower: b, Upper: b}}
}
