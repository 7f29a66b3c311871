package dynamostore

import (
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// TestTimestampsAcrossClocks: two processes (two stores, each under its own
// service) whose clocks differ by an hour write the same entity, as two
// Lambda execution environments may (issue 23, item 8). Each write's
// Timestamp is after the previous version's whichever process writes, the
// ETag each answers is the stored version's, and an If-Match with an old
// ETag fails. Both layouts.
func TestTimestampsAcrossClocks(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) {
			base := newTestStoreWith(t, layout.opts)
			env := newEnv(t, base)
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
			e, err := ahead.InsertEntity(env.ctx, sc, env.table, []byte(`{"PartitionKey":"p","RowKey":"r","V":1}`))
			if err != nil {
				t.Fatal(err)
			}
			if !e.Timestamp.After(start.Add(time.Hour - time.Minute)) {
				t.Fatalf("insert Timestamp %v does not come from the fast clock", e.Timestamp)
			}
			prev := e.Timestamp
			seen := map[string]bool{tables.ETag(prev): true}
			update := func(svc *tables.Service, in tables.UpdateInput) time.Time {
				t.Helper()
				in.Table, in.PartitionKey, in.RowKey = env.table, "p", "r"
				ts, err := svc.UpdateEntity(env.ctx, sc, in)
				if err != nil {
					t.Fatalf("UpdateEntity(%+v): %v", in, err)
				}
				got, err := svc.GetEntity(env.ctx, sc, env.table, "p", "r")
				if err != nil {
					t.Fatal(err)
				}
				if !ts.After(prev) || !got.Timestamp.Equal(ts) {
					t.Fatalf("UpdateEntity answered %v, stored %v; want equal and after %v", ts, got.Timestamp, prev)
				}
				if seen[tables.ETag(ts)] {
					t.Fatalf("ETag %s reused", tables.ETag(ts))
				}
				seen[tables.ETag(ts)] = true
				prev = ts
				return ts
			}
			update(behind, tables.UpdateInput{Body: []byte(`{"V":2}`)})                             // Insert Or Replace
			update(behind, tables.UpdateInput{Body: []byte(`{"W":3}`), Merge: true})                // Insert Or Merge
			update(behind, tables.UpdateInput{Body: []byte(`{"V":4}`), IfMatch: "*"})               // Update
			update(behind, tables.UpdateInput{Body: []byte(`{"V":5}`), IfMatch: tables.ETag(prev)}) // Update If-Match
			update(ahead, tables.UpdateInput{Body: []byte(`{"V":6}`), IfMatch: tables.ETag(prev)})
			stale := prev.Add(-time.Second)
			_, err = behind.UpdateEntity(env.ctx, sc, tables.UpdateInput{Table: env.table, PartitionKey: "p", RowKey: "r",
				Body: []byte(`{"V":7}`), IfMatch: tables.ETag(stale)})
			if ae, ok := apierr.As(err); !ok || ae.Code != apierr.UpdateConditionNotSatisfied {
				t.Fatalf("If-Match with an old ETag: %v; want UpdateConditionNotSatisfied", err)
			}
			// A batch from the slow clock: one Timestamp, past the stored one.
			res, err := behind.Batch(env.ctx, sc, env.table, []tables.BatchOp{
				{Kind: tables.BatchUpdate, PartitionKey: "p", RowKey: "r", Body: []byte(`{"V":8}`)},
				{Kind: tables.BatchInsert, Body: []byte(`{"PartitionKey":"p","RowKey":"s"}`)},
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
