package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

// sibling is a second store on s's tables, as another process (another
// Lambda execution environment) would open them, with its own cache.
func sibling(t *testing.T, s *Store, optFns ...func(*dynamodb.Options)) *Store {
	t.Helper()
	other, err := New(dynamolocal.Context(t, testTimeout), dynamolocal.Client(t, optFns...), s.opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return other
}

// waitRecreate creates a table once its name's recreateDelay has passed,
// requiring ErrTableBeingDeleted until then.
func waitRecreate(t *testing.T, env *testEnv) {
	t.Helper()
	deadline := time.Now().Add(env.s.recreateDelay() + 10*time.Second)
	for {
		_, err := env.s.CreateTable(env.ctx, env.account, env.table)
		if err == nil {
			return
		}
		if !errors.Is(err, store.ErrTableBeingDeleted) || time.Now().After(deadline) {
			t.Fatalf("CreateTable after delete: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sharedItems returns the keys of every item of the shared table.
func sharedItems(t *testing.T, s *Store) []string {
	t.Helper()
	var keys []string
	in := &dynamodb.ScanInput{TableName: aws.String(s.opts.SharedTable), ConsistentRead: aws.Bool(true)}
	for {
		out, err := s.db.Scan(dynamolocal.Context(t, testTimeout), in)
		if err != nil {
			t.Fatalf("Scan: %v", err)
		}
		for _, it := range out.Items {
			keys = append(keys, stringAttr(it, attrPartitionKey)+" "+stringAttr(it, attrRowKey))
		}
		if out.LastEvaluatedKey == nil {
			return keys
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// TestSharedDeleteIsImmediate: a deleted table is gone for every operation at
// once, its name can be taken again once recreateDelay has passed (before
// that: ErrTableBeingDeleted, as Azure's 409 TableBeingDeleted), and the new
// table never shows the old one's entities, although they are not purged
// yet.
func TestSharedDeleteIsImmediate(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStoreWith(t, Options{CatalogCacheTTL: 50 * time.Millisecond}))
	env.insert(newEntity("p", "old", props{"V": edm.NewInt32(1)}))
	if err := env.s.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatalf("DeleteTable: %v", err)
	}
	for name, call := range map[string]func() error{
		"GetTable":  func() error { _, err := env.s.GetTable(env.ctx, env.account, env.table); return err },
		"GetEntity": func() error { _, err := env.s.GetEntity(env.ctx, env.account, env.table, "p", "old"); return err },
		"QueryEntities": func() error {
			_, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{Top: 10})
			return err
		},
		"Write":       func() error { return env.write(store.Op{Kind: store.OpReplace, Entity: newEntity("p", "new", nil)}) },
		"SetTableACL": func() error { return env.s.SetTableACL(env.ctx, env.account, env.table, nil) },
		"DeleteTable": func() error { return env.s.DeleteTable(env.ctx, env.account, env.table) },
	} {
		if err := call(); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("%s after DeleteTable: %v; want ErrTableNotFound", name, err)
		}
	}
	page, err := env.s.QueryTables(env.ctx, env.account, store.TableQuery{Top: 10})
	if err != nil || len(page.Tables) != 0 {
		t.Errorf("QueryTables after DeleteTable = %+v, %v; want none", page.Tables, err)
	}
	if _, err := env.s.CreateTable(env.ctx, env.account, strings.ToUpper(env.table)); !errors.Is(err, store.ErrTableBeingDeleted) {
		t.Errorf("CreateTable right after DeleteTable: %v; want ErrTableBeingDeleted", err)
	}
	waitRecreate(t, env)
	if _, err := env.s.GetEntity(env.ctx, env.account, env.table, "p", "old"); !errors.Is(err, store.ErrEntityNotFound) {
		t.Errorf("old entity in the new table: %v; want ErrEntityNotFound", err)
	}
	page2, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{Top: 10})
	if err != nil || len(page2.Entities) != 0 {
		t.Errorf("query of the new table = %d entities, %v; want none", len(page2.Entities), err)
	}
	if n := len(sharedItems(t, env.s)); n != 1 {
		t.Errorf("shared table holds %d items; want the old table's 1, not yet purged", n)
	}
}

// TestSharedPurge: the purge deletes a deleted table's items, overflow items
// of a large entity included, and nothing of another table, and ends its
// purge item.
func TestSharedPurge(t *testing.T) {
	t.Parallel()
	s := newTestStoreWith(t, Options{CatalogCacheTTL: 50 * time.Millisecond, PurgeGrace: time.Millisecond})
	env := newEnv(t, s)
	for i := range 60 {
		env.insert(newEntity(fmt.Sprintf("p%d", i%7), fmt.Sprintf("r%02d", i), props{"I": edm.NewInt32(int32(i))}))
	}
	large := newEntity("big", "one", props{})
	for i := range 3 {
		large.Properties[fmt.Sprintf("B%d", i)] = edm.NewBinary(make([]byte, 300_000))
	}
	env.insert(large)
	keep := newEntity("p0", "keep", props{"K": edm.NewString("k")})
	if _, err := s.CreateTable(env.ctx, env.account, "Other"); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(env.ctx, env.account, "Other", []store.Op{{Kind: store.OpInsert, Entity: keep}}); err != nil {
		t.Fatal(err)
	}
	before := len(sharedItems(t, s))
	if err := s.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // PurgeGrace
	rep, err := s.Purge(env.ctx)
	if err != nil {
		t.Fatalf("Purge: %v", err)
	}
	if rep.Tables != 1 || rep.Items != before-1 || rep.Pending != 0 {
		t.Errorf("Purge = %+v; want 1 table, %d items, none pending", rep, before-1)
	}
	if items := sharedItems(t, s); len(items) != 1 {
		t.Errorf("shared table after purge holds %q; want Other's entity alone", items)
	}
	got, err := s.GetEntity(env.ctx, env.account, "Other", "p0", "keep")
	if err != nil || got.Properties["K"].Str != "k" {
		t.Errorf("Other's entity after the purge: %v, %v", got, err)
	}
	due, err := s.duePurges(env.ctx)
	if err != nil || len(due) != 0 {
		t.Errorf("purge items left: %d, %v", len(due), err)
	}
	if rep, err := s.Purge(env.ctx); err != nil || rep != (PurgeReport{}) {
		t.Errorf("second Purge = %+v, %v; want nothing to do", rep, err)
	}
}

// TestSharedPurgeResumes: a purge that stops half way (its time runs out)
// gives its lease back, so another purger resumes the table at once, and a
// table created meanwhile under the same name keeps everything.
//
// The first purge stops right after its first batch of deletes:
// stopAfterBatch cancels its context once a BatchWriteItem has answered,
// so no clock decides how far it gets.
func TestSharedPurgeResumes(t *testing.T) {
	t.Parallel()
	stop := &stopAfterBatch{}
	s := newTestStoreWith(t, Options{CatalogCacheTTL: 50 * time.Millisecond, PurgeGrace: time.Millisecond}, stop.option)
	env := newEnv(t, s)
	for p := range 4 {
		var ops []store.Op
		for r := range 25 {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity(fmt.Sprintf("p%d", p), fmt.Sprintf("r%02d", r), nil)})
		}
		env.mustWrite(ops...)
	}
	if err := s.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	waitRecreate(t, env)
	fresh := newEntity("p1", "r01", props{"New": edm.NewBoolean(true)})
	env.insert(fresh)

	ctx, cancel := context.WithCancel(env.ctx)
	stop.arm(cancel)
	rep, err := s.Purge(ctx)
	cancel()
	if n := int(stop.items.Load()); err != nil || rep.Pending != 1 || rep.Tables != 0 || n == 0 || rep.Items < n {
		t.Fatalf("interrupted Purge = %+v, %v; want at least its first batch's %d items and the table pending", rep, err, n)
	}
	// No lease to wait out: the stopped purge gave it back.
	rest, err := sibling(t, s).Purge(env.ctx)
	if err != nil || rest.Tables != 1 || rest.Pending != 0 || rep.Items+rest.Items > 100 {
		t.Errorf("resumed Purge = %+v, %v after %d items; want the table, and no more than its 100 items in all", rest, err, rep.Items)
	}
	env.wantStored(fresh)
	if items := sharedItems(t, s); len(items) != 1 {
		t.Errorf("shared table after purge holds %q; want the new table's entity alone", items)
	}
}

// TestPurgeLeaseOfDeadPurger: a table leased by a purger that died (it
// never gave the lease back) is left alone until the lease runs out, then
// purged by another.
func TestPurgeLeaseOfDeadPurger(t *testing.T) {
	t.Parallel()
	s := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond})
	s.leaseFor = 200 * time.Millisecond
	env := newEnv(t, s)
	env.insert(newEntity("p", "r", nil))
	if err := s.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // past PurgeGrace
	due, err := s.duePurges(env.ctx)
	if err != nil || len(due) != 1 {
		t.Fatalf("duePurges = %d items, %v", len(due), err)
	}
	if held, err := s.leasePurge(env.ctx, due[0], &purgeLeaseHolder{token: "dead"}); !held || err != nil {
		t.Fatalf("the dead purger's lease: %v, %v", held, err)
	}
	if rep, err := s.Purge(env.ctx); err != nil || rep != (PurgeReport{Pending: 1}) {
		t.Errorf("Purge while the dead purger's lease runs = %+v, %v; want it left alone", rep, err)
	}
	time.Sleep(s.leaseFor)
	if rep, err := s.Purge(env.ctx); err != nil || rep != (PurgeReport{Tables: 1, Items: 1}) {
		t.Errorf("Purge once the lease ran out = %+v, %v; want the table", rep, err)
	}
}

// stopAfterBatch cancels a context, once armed, when a BatchWriteItem call
// has answered: the call's deletes (items of them) are applied and counted,
// and the purge stops at its next step.
type stopAfterBatch struct {
	cancel atomic.Pointer[context.CancelFunc]
	items  atomic.Int32
}

func (f *stopAfterBatch) arm(cancel context.CancelFunc) { f.cancel.Store(&cancel) }

func (f *stopAfterBatch) option(o *dynamodb.Options) {
	initHook("stopAfterBatch", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleInitialize(ctx, in)
		if bw, ok := in.Parameters.(*dynamodb.BatchWriteItemInput); ok && err == nil {
			if cancel := f.cancel.Swap(nil); cancel != nil {
				for _, reqs := range bw.RequestItems {
					f.items.Add(int32(len(reqs)))
				}
				(*cancel)()
			}
		}
		return out, md, err
	})(o)
}

// unprocessedFault makes DynamoDB leave work of BatchWriteItem unprocessed,
// as it does under throttling or when a call exceeds a partition's
// throughput ("If DynamoDB returns any unprocessed items, you should retry
// the batch operation on those items", the BatchWriteItem reference): the
// first calls send only half of each table's requests on to DynamoDB Local
// and answer the rest as UnprocessedItems, not applied.
type unprocessedFault struct {
	calls  int32 // how many calls leave work unprocessed
	called atomic.Int32
}

func (f *unprocessedFault) option(o *dynamodb.Options) {
	initHook("unprocessedFault", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		bw, ok := in.Parameters.(*dynamodb.BatchWriteItemInput)
		if !ok || f.called.Add(1) > f.calls {
			return next.HandleInitialize(ctx, in)
		}
		sent, left := map[string][]types.WriteRequest{}, map[string][]types.WriteRequest{}
		for table, reqs := range bw.RequestItems {
			half := (len(reqs) + 1) / 2
			sent[table], left[table] = reqs[:half], reqs[half:]
		}
		cp := *bw
		cp.RequestItems = sent
		in.Parameters = &cp
		out, md, err := next.HandleInitialize(ctx, in)
		if err != nil {
			return out, md, err
		}
		res := out.Result.(*dynamodb.BatchWriteItemOutput)
		if res.UnprocessedItems == nil {
			res.UnprocessedItems = map[string][]types.WriteRequest{}
		}
		for table, reqs := range left {
			if len(reqs) > 0 {
				res.UnprocessedItems[table] = append(res.UnprocessedItems[table], reqs...)
			}
		}
		return out, md, nil
	})(o)
}

// TestPurgeRetriesUnprocessedItems: where DynamoDB leaves part of a batch
// of deletes unprocessed, the purge sends that part again (after a
// backoff), and the table's items are all gone.
func TestPurgeRetriesUnprocessedItems(t *testing.T) {
	t.Parallel()
	fault := &unprocessedFault{calls: 6}
	s := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond}, fault.option)
	env := newEnv(t, s)
	for p := range 2 {
		var ops []store.Op
		for r := range 40 {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity(fmt.Sprintf("p%d", p), fmt.Sprintf("r%02d", r), nil)})
		}
		env.mustWrite(ops...)
	}
	if err := s.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // past PurgeGrace
	rep, err := s.Purge(env.ctx)
	if err != nil || rep.Tables != 1 || rep.Items != 80 {
		t.Errorf("Purge = %+v, %v; want the table's 80 items", rep, err)
	}
	if n := fault.called.Load(); n <= fault.calls {
		t.Errorf("%d BatchWriteItem calls; the fault left work unprocessed in the first %d, so more were needed", n, fault.calls)
	}
	if items := sharedItems(t, s); len(items) != 0 {
		t.Errorf("shared table after the purge holds %q", items)
	}
}

// TestPurgeLease: the holder of a purge lease renews it while it runs;
// another purger cannot take it until it runs out, and then the first
// holder's renewal fails, so it stops working on the table.
func TestPurgeLease(t *testing.T) {
	s := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond})
	env := newEnv(t, s)
	if err := s.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // past PurgeGrace
	due, err := s.duePurges(env.ctx)
	if err != nil || len(due) != 1 {
		t.Fatalf("duePurges = %d items, %v", len(due), err)
	}
	a, b := &purgeLeaseHolder{token: newGen()}, &purgeLeaseHolder{token: newGen()}
	lease := func(h *purgeLeaseHolder, want bool, what string) {
		t.Helper()
		if held, err := s.leasePurge(env.ctx, due[0], h); err != nil || held != want {
			t.Errorf("%s: leasePurge = %v, %v; want %v", what, held, err, want)
		}
	}
	lease(a, true, "first take")
	lease(a, true, "renewal by the holder")
	lease(b, false, "another purger while the lease runs")
	if err := s.expireLeases(env.ctx); err != nil {
		t.Fatal(err)
	}
	lease(b, true, "another purger once the lease ran out")
	lease(a, false, "the first holder's renewal after the take-over")
}

// TestPurgeLeaseOnce: a table purged well within its lease costs one lease
// write, not one per shard or page.
func TestPurgeLeaseOnce(t *testing.T) {
	t.Parallel()
	calls := newCallCounter()
	s := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond}, calls.option)
	env := newEnv(t, s)
	var ops []store.Op
	for r := range 30 {
		ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity("p", fmt.Sprintf("r%02d", r), nil)})
	}
	env.mustWrite(ops...)
	if err := s.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // past PurgeGrace
	calls.take()
	rep, err := s.Purge(env.ctx)
	if err != nil || rep != (PurgeReport{Tables: 1, Items: 30}) {
		t.Errorf("Purge = %+v, %v; want the table's 30 items", rep, err)
	}
	if got := calls.take()["UpdateItem"]; got != 1 {
		t.Errorf("Purge made %d lease UpdateItems; want 1", got)
	}
}

// TestPurgeStopsWhenLeaseTaken: a purger's heartbeat renews its lease, and
// when a renewal finds the table taken over by another purger (its lease
// ran out meanwhile), the purge stops working on the table: it sends no
// more deletes, and reports the table pending. Here the other purger takes
// the table right after the first page's Query, and the first purger's
// deletes wait until its heartbeat has met the take-over.
func TestPurgeStopsWhenLeaseTaken(t *testing.T) {
	t.Parallel()
	var takeOver atomic.Pointer[func()]
	var sent atomic.Int32
	hooks := initHook("takeOver", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if _, ok := in.Parameters.(*dynamodb.BatchWriteItemInput); ok {
			// Held until the purge stops working on the table, which
			// its heartbeat must make it do.
			select {
			case <-ctx.Done():
				return middleware.InitializeOutput{}, middleware.Metadata{}, ctx.Err()
			case <-time.After(testTimeout / 2):
				sent.Add(1)
			}
		}
		out, md, err := next.HandleInitialize(ctx, in)
		if q, ok := in.Parameters.(*dynamodb.QueryInput); ok && aws.ToString(q.IndexName) == orderIndex && err == nil {
			if f := takeOver.Swap(nil); f != nil {
				(*f)()
			}
		}
		return out, md, err
	})
	s := newTestStoreWith(t, Options{PurgeGrace: time.Millisecond}, hooks)
	s.leaseFor = 300 * time.Millisecond // a heartbeat every 100 ms
	env := newEnv(t, s)
	var ops []store.Op
	for r := range 60 {
		ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity("p", fmt.Sprintf("r%05d", r), nil)})
	}
	env.mustWrite(ops[:30]...)
	env.mustWrite(ops[30:]...)
	if err := s.DeleteTable(env.ctx, env.account, env.table); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Millisecond) // past PurgeGrace

	other := sibling(t, s)
	// The first purger's lease ran out (its renewals failed, say) and the
	// other took the table: its lease, whatever the first one's.
	take := func() {
		due, err := other.duePurges(env.ctx)
		if err != nil || len(due) != 1 {
			t.Errorf("duePurges = %d items, %v", len(due), err)
			return
		}
		if _, err := other.db.UpdateItem(env.ctx, &dynamodb.UpdateItemInput{
			TableName:                aws.String(other.opts.CatalogTable),
			Key:                      catalogKey(purgeAccount, stringAttr(due[0], catKey)),
			UpdateExpression:         aws.String("SET #l = :until, #b = :other"),
			ExpressionAttributeNames: map[string]string{"#l": catLease, "#b": catLeaseBy},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":until": str(formatDeletedAt(time.Now().Add(time.Hour))), ":other": str(newGen())},
		}); err != nil {
			t.Errorf("the other purger's take-over: %v", err)
		}
	}
	takeOver.Store(&take)
	rep, err := s.Purge(env.ctx)
	if err != nil || rep != (PurgeReport{Pending: 1}) {
		t.Errorf("Purge = %+v, %v; want no item deleted and the table pending", rep, err)
	}
	if n := sent.Load(); n != 0 {
		t.Errorf("%d batches of deletes sent after the take-over", n)
	}

	// The other purger's lease runs out; the next purge ends the table.
	if err := other.expireLeases(env.ctx); err != nil {
		t.Fatal(err)
	}
	if rep, err := other.Purge(env.ctx); err != nil || rep != (PurgeReport{Tables: 1, Items: 60}) {
		t.Errorf("resumed Purge = %+v, %v; want the table's 60 items", rep, err)
	}
	if items := sharedItems(t, s); len(items) != 0 {
		t.Errorf("shared table after the purge holds %q", items)
	}
}

// expireLeases ends every purge lease, as time would.
func (s *Store) expireLeases(ctx context.Context) error {
	due, err := s.duePurges(ctx)
	if err != nil {
		return err
	}
	for _, it := range due {
		if _, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                aws.String(s.opts.CatalogTable),
			Key:                      catalogKey(purgeAccount, stringAttr(it, catKey)),
			UpdateExpression:         aws.String("REMOVE #l"),
			ExpressionAttributeNames: map[string]string{"#l": catLease},
		}); err != nil {
			return err
		}
	}
	return nil
}

// TestSharedCreateRaces: of racing Create Tables of one name, from two
// processes, exactly one wins and both then see the same table; a Create
// Table racing a Delete Table of the same name leaves a consistent name:
// either the table is gone (and one purge item is due), or it is there,
// whole and listed.
func TestSharedCreateRaces(t *testing.T) {
	t.Parallel()
	a := newTestStoreWith(t, Options{CatalogCacheTTL: 50 * time.Millisecond})
	b := sibling(t, a)
	ctx := dynamolocal.Context(t, testTimeout)
	t.Run("TwoCreates", func(t *testing.T) {
		for i := range 10 {
			name := fmt.Sprintf("Twin%d", i)
			var wins atomic.Int32
			var wg sync.WaitGroup
			for _, s := range []*Store{a, b, a, b} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := s.CreateTable(ctx, "acct", name)
					switch {
					case err == nil:
						wins.Add(1)
					case !errors.Is(err, store.ErrTableExists):
						t.Errorf("CreateTable: %v", err)
					}
				}()
			}
			wg.Wait()
			if wins.Load() != 1 {
				t.Fatalf("%s: %d creates won; want 1", name, wins.Load())
			}
			if err := a.Write(ctx, "acct", name, []store.Op{{Kind: store.OpInsert, Entity: newEntity("p", "r", nil)}}); err != nil {
				t.Fatal(err)
			}
			if _, err := b.GetEntity(ctx, "acct", name, "p", "r"); err != nil {
				t.Fatalf("the other process reads: %v", err)
			}
		}
	})
	t.Run("CreateAndDelete", func(t *testing.T) {
		for i := range 10 {
			name := fmt.Sprintf("Race%d", i)
			if _, err := a.CreateTable(ctx, "acct", name); err != nil {
				t.Fatal(err)
			}
			if err := a.Write(ctx, "acct", name, []store.Op{{Kind: store.OpInsert, Entity: newEntity("p", "r", nil)}}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			var createErr, deleteErr error
			wg.Add(2)
			go func() { defer wg.Done(); _, createErr = b.CreateTable(ctx, "acct", name) }()
			go func() { defer wg.Done(); deleteErr = a.DeleteTable(ctx, "acct", name) }()
			wg.Wait()
			if deleteErr != nil {
				t.Fatalf("DeleteTable: %v", deleteErr)
			}
			if !errors.Is(createErr, store.ErrTableExists) && !errors.Is(createErr, store.ErrTableBeingDeleted) {
				t.Fatalf("CreateTable racing a delete: %v; want ErrTableExists or ErrTableBeingDeleted", createErr)
			}
			for _, s := range []*Store{a, b} {
				if _, err := s.GetTable(ctx, "acct", name); !errors.Is(err, store.ErrTableNotFound) {
					t.Fatalf("GetTable after the race: %v", err)
				}
				if _, err := s.GetEntity(ctx, "acct", name, "p", "r"); !errors.Is(err, store.ErrTableNotFound) && !errors.Is(err, store.ErrEntityNotFound) {
					t.Fatalf("GetEntity after the race: %v", err)
				}
			}
		}
		// b's look-ups of the deleted tables expire with its cache.
		time.Sleep(a.opts.CatalogCacheTTL)
		if _, err := b.GetEntity(ctx, "acct", "Race0", "p", "r"); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("GetEntity once the other process's cache expired: %v", err)
		}
		due, err := a.duePurgesAfter(ctx, time.Now().Add(time.Minute))
		if err != nil || len(due) != 10 {
			t.Errorf("purge items: %d, %v; want one per deleted table", len(due), err)
		}
	})
}

// duePurgesAfter reads the purge items as if it were now.
func (s *Store) duePurgesAfter(ctx context.Context, now time.Time) ([]item, error) {
	saved := s.opts.PurgeGrace
	s.opts.PurgeGrace = -time.Until(now)
	defer func() { s.opts.PurgeGrace = saved }()
	return s.duePurges(ctx)
}

// catalogFault makes the catalog's transactions that put an entry (Create
// Table's) misbehave, after DynamoDB Local applied them (lose) or before
// they are sent (refuse), for the first n attempts.
type catalogFault struct {
	table         string
	lose, refuse  bool
	n, seen, sent atomic.Int32
}

type faultTableKey struct{}

func (f *catalogFault) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("faultTable",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput); ok && len(tx.TransactItems) > 0 &&
					tx.TransactItems[0].Put != nil && aws.ToString(tx.TransactItems[0].Put.TableName) == f.table {
					ctx = middleware.WithStackValue(ctx, faultTableKey{}, true)
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.Before); err != nil {
			return err
		}
		return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("fault",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				hit, _ := middleware.GetStackValue(ctx, faultTableKey{}).(bool)
				if !hit || f.seen.Add(1) > f.n.Load() {
					return next.HandleDeserialize(ctx, in)
				}
				if f.refuse {
					return middleware.DeserializeOutput{}, middleware.Metadata{}, &smithyhttp.RequestSendError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
				}
				out, md, err := next.HandleDeserialize(ctx, in)
				f.sent.Add(1)
				if err != nil {
					return out, md, err
				}
				return middleware.DeserializeOutput{}, md, &smithyhttp.RequestSendError{Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
			}), middleware.After)
	})
}

// TestSharedCreateOutcomeUnknown: Create Table's catalog write whose answer
// is lost after DynamoDB applied it is sent again and recognised as the
// store's own; when every answer is lost the outcome is unknown (500
// OperationTimedOut), and 503 (ErrUnavailable) only when the write surely
// was not sent.
func TestSharedCreateOutcomeUnknown(t *testing.T) {
	t.Parallel()
	base := newTestStore(t)
	ctx := dynamolocal.Context(t, testTimeout)
	for _, c := range []struct {
		name    string
		fault   *catalogFault
		wantErr error
		exists  bool
	}{
		{"FirstAnswerLost", &catalogFault{lose: true}, nil, true},
		{"EveryAnswerLost", &catalogFault{lose: true}, store.ErrOutcomeUnknown, true},
		{"Refused", &catalogFault{refuse: true}, store.ErrUnavailable, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.fault.table = base.opts.CatalogTable
			c.fault.n.Store(1)
			if c.name != "FirstAnswerLost" {
				c.fault.n.Store(1000)
			}
			s := sibling(t, base, c.fault.option)
			_, err := s.CreateTable(ctx, "acct", c.name)
			if c.wantErr == nil && err != nil || c.wantErr != nil && !errors.Is(err, c.wantErr) {
				t.Fatalf("CreateTable = %v; want %v", err, c.wantErr)
			}
			_, gerr := base.GetTable(ctx, "acct", c.name)
			if exists := gerr == nil; exists != c.exists {
				t.Errorf("table exists = %v (%v); want %v", exists, gerr, c.exists)
			}
		})
	}
}

// TestSharedConfirmTable: with ConfirmTable (the Lambda functions), a table
// deleted by another process is missing at once for a process whose cache
// still holds it, and once created again, that process's reads and writes
// reach the new table, never the old id.
func TestSharedConfirmTable(t *testing.T) {
	t.Parallel()
	a := newTestStoreWith(t, Options{CatalogCacheTTL: 50 * time.Millisecond, ConfirmTable: true})
	ctx := dynamolocal.Context(t, testTimeout)
	// b keeps its look-ups for an hour.
	opts := a.opts
	opts.CatalogCacheTTL = time.Hour
	b, err := New(ctx, dynamolocal.Client(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CreateTable(ctx, "acct", "T"); err != nil {
		t.Fatal(err)
	}
	old := newEntity("p", "r", props{"Old": edm.NewBoolean(true)})
	if err := b.Write(ctx, "acct", "T", []store.Op{{Kind: store.OpInsert, Entity: old}}); err != nil {
		t.Fatal(err) // b's cache now holds the table for an hour
	}
	if err := a.DeleteTable(ctx, "acct", "T"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.GetEntity(ctx, "acct", "T", "p", "r"); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("GetEntity in the other process right after the delete: %v; want ErrTableNotFound", err)
	}
	if _, err := b.QueryEntities(ctx, "acct", "T", store.Query{Top: 10}); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("QueryEntities in the other process right after the delete: %v; want ErrTableNotFound", err)
	}
	// b looks the table up again, then a deletes and re-creates it.
	waitRecreate(t, &testEnv{t: t, s: a, ctx: ctx, account: "acct", table: "T"})
	if _, err := b.GetEntity(ctx, "acct", "T", "p", "r"); !errors.Is(err, store.ErrEntityNotFound) {
		t.Fatalf("GetEntity of the new table: %v", err)
	}
	if err := a.DeleteTable(ctx, "acct", "T"); err != nil {
		t.Fatal(err)
	}
	waitRecreate(t, &testEnv{t: t, s: a, ctx: ctx, account: "acct", table: "T"})
	fresh := newEntity("p", "new", nil)
	if err := b.Write(ctx, "acct", "T", []store.Op{{Kind: store.OpInsert, Entity: fresh}}); err != nil {
		t.Fatalf("write through the stale cache: %v", err)
	}
	if _, err := a.GetEntity(ctx, "acct", "T", "p", "new"); err != nil {
		t.Errorf("the write through the stale cache is not in the new table: %v", err)
	}
}

// TestSharedConfirmFails: with ConfirmTable, when the catalog read that
// confirms the table fails, a write that DynamoDB applied answers
// ErrOutcomeUnknown (500 OperationTimedOut: the table may have been deleted
// meanwhile), never success or 503; a read answers the failure.
func TestSharedConfirmFails(t *testing.T) {
	t.Parallel()
	var failCatalog atomic.Bool
	catalogDown := initHook("catalogDown", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if get, ok := in.Parameters.(*dynamodb.GetItemInput); ok && failCatalog.Load() && strings.HasSuffix(aws.ToString(get.TableName), "catalog") {
			return middleware.InitializeOutput{}, middleware.Metadata{}, &types.InternalServerError{Message: aws.String("Internal server error")}
		}
		return next.HandleInitialize(ctx, in)
	})
	s := newTestStoreWith(t, Options{ConfirmTable: true, CatalogCacheTTL: time.Hour}, catalogDown)
	env := newEnv(t, s)
	env.insert(newEntity("p", "cached", nil)) // the look-up is cached from here on
	failCatalog.Store(true)
	applied := newEntity("p", "applied", nil)
	err := s.Write(env.ctx, env.account, env.table, []store.Op{{Kind: store.OpInsert, Entity: applied}})
	if !errors.Is(err, store.ErrOutcomeUnknown) {
		t.Errorf("write whose table could not be confirmed: %v; want ErrOutcomeUnknown", err)
	}
	if _, err := s.GetEntity(env.ctx, env.account, env.table, "p", "cached"); err == nil || errors.Is(err, store.ErrOutcomeUnknown) {
		t.Errorf("read whose table could not be confirmed: %v; want the catalog's failure", err)
	}
	failCatalog.Store(false)
	env.wantStored(applied)
}
