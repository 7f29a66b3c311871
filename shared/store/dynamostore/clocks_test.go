package dynamostore

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// TestTimestampsAcrossClocks: two processes (two stores, each under its own
// service) whose clocks differ by an hour write the same entity, as two
// Lambda execution environments may (docs/consistency.md, "Per operation
// and store": ETags only increase, whichever process writes). Each write's
// Timestamp is after the previous version's whichever process writes, the
// ETag each answers is the stored version's, and an If-Match with an old
// ETag fails. Both layouts.
func TestTimestampsAcrossClocks(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) {
			base := newTestStore(t)
			env := layout.newEnv(t, base)
			other := sibling(t, base)
			start := time.Now()
			ahead, err := tables.New(base, tables.Options{Now: func() time.Time { return time.Now().Add(time.Hour) }})
			if err != nil {
				t.Fatal(err)
			}
			behind, err := tables.New(other, tables.Options{Now: func() time.Time { return time.Now() }})
			if err != nil {
				t.Fatal(err)
			}
			sc := tables.Scope{Account: env.account}
			e, err := ahead.WriteEntity(env.ctx, sc, env.table, tables.EntityWrite{Op: operation.InsertEntity,
				Body: []byte(`{"PartitionKey":"p","RowKey":"r","V":1}`)})
			if err != nil {
				t.Fatal(err)
			}
			if !e.Timestamp.After(start.Add(time.Hour - time.Minute)) {
				t.Fatalf("insert Timestamp %v does not come from the fast clock", e.Timestamp)
			}
			prev := e.Timestamp
			seen := map[string]bool{tables.ETag(prev): true}
			update := func(svc *tables.Service, w tables.EntityWrite) time.Time {
				t.Helper()
				w.PartitionKey, w.RowKey = "p", "r"
				written, err := svc.WriteEntity(env.ctx, sc, env.table, w)
				if err != nil {
					t.Fatalf("WriteEntity(%+v): %v", w, err)
				}
				ts := written.Timestamp
				got, err := svc.GetEntity(env.ctx, sc, env.table, "p", "r")
				if err != nil {
					t.Fatal(err)
				}
				if !ts.After(prev) || !got.Timestamp.Equal(ts) {
					t.Fatalf("WriteEntity answered %v, stored %v; want equal and after %v", ts, got.Timestamp, prev)
				}
				if seen[tables.ETag(ts)] {
					t.Fatalf("ETag %s reused", tables.ETag(ts))
				}
				seen[tables.ETag(ts)] = true
				prev = ts
				return ts
			}
			update(behind, tables.EntityWrite{Op: operation.InsertOrReplaceEntity, Body: []byte(`{"V":2}`)})
			update(behind, tables.EntityWrite{Op: operation.InsertOrMergeEntity, Body: []byte(`{"W":3}`)})
			update(behind, tables.EntityWrite{Op: operation.UpdateEntity, Body: []byte(`{"V":4}`), IfMatch: "*"})
			update(behind, tables.EntityWrite{Op: operation.UpdateEntity, Body: []byte(`{"V":5}`), IfMatch: tables.ETag(prev)})
			update(ahead, tables.EntityWrite{Op: operation.UpdateEntity, Body: []byte(`{"V":6}`), IfMatch: tables.ETag(prev)})
			stale := prev.Add(-time.Second)
			_, err = behind.WriteEntity(env.ctx, sc, env.table, tables.EntityWrite{Op: operation.UpdateEntity,
				PartitionKey: "p", RowKey: "r", Body: []byte(`{"V":7}`), IfMatch: tables.ETag(stale)})
			if ae, ok := apierr.As(err); !ok || ae.Code != apierr.UpdateConditionNotSatisfied {
				t.Fatalf("If-Match with an old ETag: %v; want UpdateConditionNotSatisfied", err)
			}
			// A batch from the slow clock: one Timestamp, past the stored one.
			res, err := behind.Batch(env.ctx, sc, env.table, []tables.EntityWrite{
				{Op: operation.InsertOrReplaceEntity, PartitionKey: "p", RowKey: "r", Body: []byte(`{"V":8}`)},
				{Op: operation.InsertEntity, Body: []byte(`{"PartitionKey":"p","RowKey":"s"}`)},
			})
			if err != nil {
				t.Fatal(err)
			}
			if ts := res[0].Entity.Timestamp; !ts.After(prev) || !ts.Equal(res[1].Entity.Timestamp) {
				t.Fatalf("batch Timestamps %v, %v; want one, after %v", ts, res[1].Entity.Timestamp, prev)
			}
			for _, r := range res {
				got, err := behind.GetEntity(env.ctx, sc, env.table, r.Entity.PartitionKey, r.Entity.RowKey)
				if err != nil || !got.Timestamp.Equal(r.Entity.Timestamp) {
					t.Fatalf("stored %v (%v); batch answered %v", got, err, r.Entity.Timestamp)
				}
			}
		})
	}
}

// TestRecreatedEntityKeepsNoRaisedTimestamp: a write raised past a stored
// version it learned of, which finds the entity deleted when it tries
// again, creates it under its own Timestamp, not the raised one. Another
// writer raising past the same version chose that same Timestamp, so the
// re-created entity answered the ETag of a deleted version, and an
// If-Match holding that ETag would have matched a version its client never
// read. Found by internal/linearize over DynamoDB with lost answers: two
// writes on one entity answered the same ETag (the history is
// internal/linearize/testdata/dynamodb-reused-etag.json).
func TestRecreatedEntityKeepsNoRaisedTimestamp(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) {
			var (
				armed atomic.Bool
				meet  func()
			)
			// Between the first attempt of the merge below and its next
			// one, another process replaces the entity (raising past the
			// version the merge just learned of) and deletes it.
			hook := initHook("replaceAndDelete", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleInitialize(ctx, in)
				if _, ok := in.Parameters.(*dynamodb.UpdateItemInput); ok && armed.CompareAndSwap(true, false) {
					meet()
				}
				return out, md, err
			})
			s := newTestStore(t, hook)
			env := layout.newEnv(t, s)
			other := sibling(t, s)
			// Both writes were assigned a Timestamp before the stored one's,
			// so both raise past it.
			merge := newEntity("p", "r", props{"M": edm.NewString("merge")})
			replace := newEntity("p", "r", props{"V": edm.NewString("replaced")})
			stored := newEntity("p", "r", props{"V": edm.NewString("first")})
			assigned := merge.Timestamp
			env.insert(stored)
			meet = func() {
				for _, op := range []store.Op{{Kind: store.OpReplace, Entity: replace}, {Kind: store.OpDelete, Entity: replace, Cond: store.CondExists}} {
					if err := other.Write(env.ctx, env.account, env.table, []store.Op{op}); err != nil {
						t.Errorf("the other process's %v: %v", op.Kind, err)
					}
				}
			}
			armed.Store(true)
			env.mustWrite(store.Op{Kind: store.OpMerge, Entity: merge}) // Insert Or Merge
			if armed.Load() {
				t.Fatal("the merge sent no UpdateItem")
			}
			if !replace.Timestamp.After(stored.Timestamp) {
				t.Fatalf("the replace was stored at %v, not past %v", replace.Timestamp, stored.Timestamp)
			}
			got := env.get("p", "r")
			if !got.Timestamp.Equal(merge.Timestamp) {
				t.Fatalf("stored at %v, the merge answered %v", got.Timestamp, merge.Timestamp)
			}
			if got.Timestamp.Equal(replace.Timestamp) {
				t.Fatalf("the re-created entity has the ETag of the deleted version: %s", tables.ETag(got.Timestamp))
			}
			if !got.Timestamp.Equal(assigned) {
				t.Errorf("the re-created entity is stamped %v, want the merge's own %v", got.Timestamp, assigned)
			}
		})
	}
}
