package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// testACL is Orders' stored access policy, which a restore from the
// restored catalog gives the table it creates.
var testACL = []model.SignedIdentifier{{ID: "reader", Permission: "r", Expiry: testTime}}

// restoreFixture is a deployment with a shared table whose table Orders
// (and Other, beside it) were written, then "restored" as point-in-time
// recovery would: DynamoDB Local has no RestoreTableToPointInTime, so
// dynamolocal.RestoreCopy copies the shared table (with its order index,
// and once without) and the catalog into new DynamoDB tables.
type restoreFixture struct {
	s       *Store
	ctx     context.Context
	written []*model.Entity // Orders' entities
	id      string          // Orders' id
	items   int             // Orders' items, overflow items included
	// the "restored" DynamoDB tables
	restored, restoredNoIndex, restoredCatalog string
}

func newRestoreFixture(t *testing.T) *restoreFixture {
	t.Helper()
	s := newTestStoreWith(t, Options{CatalogCacheTTL: 50 * time.Millisecond, MoveSettle: 50 * time.Millisecond})
	f := &restoreFixture{s: s, ctx: dynamolocal.Context(t, testTimeout)}
	for _, name := range []string{"Orders", "Other"} {
		if _, err := s.CreateTable(f.ctx, "acct", name); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 24 {
		f.written = append(f.written, newEntity(fmt.Sprintf("p%d", i%6), fmt.Sprintf("r%02d", i), props{
			"I": edm.NewInt64(int64(i) << 40), "D": edm.NewDouble(0.1 * float64(i)), "S": edm.NewString("s"),
			"B": edm.NewBoolean(i%2 == 0), "T": edm.NewDateTime(testTime), "G": edm.NewGuid("00000000-0000-0000-0000-000000000001")}))
	}
	large := newEntity("", "", props{}) // empty keys, and overflow items
	for i := range 3 {
		large.Properties[fmt.Sprintf("Bin%d", i)] = edm.NewBinary(make([]byte, 300_000))
	}
	f.written = append(f.written, large)
	for _, e := range f.written {
		if err := s.Write(f.ctx, "acct", "Orders", []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
			t.Fatal(err)
		}
		// Other holds the same keys: a restore must take Orders' alone.
		other := newEntity(e.PartitionKey, e.RowKey, props{"Other": edm.NewBoolean(true)})
		if err := s.Write(f.ctx, "acct", "Other", []store.Op{{Kind: store.OpInsert, Entity: other}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetTableACL(f.ctx, "acct", "Orders", testACL); err != nil {
		t.Fatal(err)
	}
	entry, err := s.readEntry(f.ctx, "test", "acct", "Orders")
	if err != nil {
		t.Fatal(err)
	}
	f.id = stringAttr(entry, catID)
	for _, it := range scanAll(t, s, s.opts.SharedTable) {
		if strings.HasPrefix(stringAttr(it, attrPartitionKey), sharedPrefix("acct", f.id)) {
			f.items++
		}
	}
	if f.items <= len(f.written) {
		t.Fatalf("Orders has %d items for %d entities; want overflow items too", f.items, len(f.written))
	}
	f.restored, f.restoredNoIndex, f.restoredCatalog = s.opts.TablePrefix+"entities-restored", s.opts.TablePrefix+"entities-noindex", s.opts.TablePrefix+"catalog-restored"
	client := dynamolocal.Client(t)
	for _, r := range []struct {
		from, to string
		indexes  bool
	}{{s.opts.SharedTable, f.restored, true}, {s.opts.SharedTable, f.restoredNoIndex, false}, {s.opts.CatalogTable, f.restoredCatalog, true}} {
		if err := dynamolocal.RestoreCopy(f.ctx, client, r.from, r.to, r.indexes); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// wantRestored asserts that table holds exactly Orders' entities as written.
func (f *restoreFixture) wantRestored(t *testing.T, s *Store, table string) {
	t.Helper()
	for _, e := range f.written {
		got, err := s.GetEntity(f.ctx, "acct", table, e.PartitionKey, e.RowKey)
		if err != nil {
			t.Fatalf("%s: GetEntity(%q, %q): %v", table, e.PartitionKey, e.RowKey, err)
		}
		if diff := entityDiff(got, e); diff != "" {
			t.Errorf("%s: (%q, %q) restored: %s", table, e.PartitionKey, e.RowKey, diff)
		}
	}
	page, err := s.QueryEntities(f.ctx, "acct", table, store.Query{Top: 1000})
	if err != nil || len(page.Entities) != len(f.written) || page.Entities[0].PartitionKey != "" || page.Entities[1].RowKey != "r00" {
		t.Fatalf("%s: query after the restore: %d entities, %v", table, len(page.Entities), err)
	}
}

// TestRestoreTable restores Orders from a point-in-time copy of the shared
// table: deleted, under its own name, its id read from the restored
// catalog, through the order index; under a new name, the id given, from
// a copy without the index (a Scan); refused into a table that has
// entities; merged into it when asked.
func TestRestoreTable(t *testing.T) {
	t.Parallel()
	f := newRestoreFixture(t)
	s, ctx := f.s, f.ctx

	if err := s.DeleteTable(ctx, "acct", "Orders"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(s.recreateDelay())
	rep, err := s.RestoreTable(ctx, Restore{From: f.restored, Catalog: f.restoredCatalog, Account: "acct", Table: "Orders"}, CopyOptions{})
	if err != nil {
		t.Fatalf("RestoreTable: %v", err)
	}
	if !rep.Created || rep.Items != f.items || !strings.Contains(rep.Source, "order index") {
		t.Errorf("report %+v; want the table created, %d items, read through the order index", rep, f.items)
	}
	f.wantRestored(t, s, "Orders")
	if info, err := s.GetTable(ctx, "acct", "Orders"); err != nil || len(info.ACL) != 1 || info.ACL[0].ID != testACL[0].ID {
		t.Errorf("the restored table's stored access policies: %+v, %v; want the restored catalog's", info.ACL, err)
	}
	if err := s.Write(ctx, "acct", "Orders", []store.Op{{Kind: store.OpInsert, Entity: newEntity("new", "after", nil)}}); err != nil {
		t.Errorf("write after the restore: %v", err)
	}
	if page, err := s.QueryEntities(ctx, "acct", "Other", store.Query{Top: 1000}); err != nil || len(page.Entities) != len(f.written) || !page.Entities[0].Properties["Other"].Bool {
		t.Errorf("Other after the restore: %d entities, %v", len(page.Entities), err)
	}

	rep, err = s.RestoreTable(ctx, Restore{From: f.restoredNoIndex, ID: f.id, Account: "acct", Table: "Orders", As: "Copy"}, CopyOptions{Rate: 500})
	if err != nil {
		t.Fatalf("RestoreTable as Copy: %v", err)
	}
	if !rep.Created || rep.Items != f.items || !strings.Contains(rep.Source, "Scan") {
		t.Errorf("report %+v; want the table created, %d items, found by a Scan", rep, f.items)
	}
	f.wantRestored(t, s, "Copy")

	// Copy has entities now: refused, and left as it was.
	changed := newEntity(f.written[0].PartitionKey, f.written[0].RowKey, props{"Changed": edm.NewBoolean(true)})
	added := newEntity("added", "later", nil)
	if err := s.Write(ctx, "acct", "Copy", []store.Op{{Kind: store.OpReplace, Entity: changed}, {Kind: store.OpInsert, Entity: added}}); err != nil {
		t.Fatal(err)
	}
	again := Restore{From: f.restored, ID: f.id, Account: "acct", Table: "Orders", As: "Copy"}
	if _, err := s.RestoreTable(ctx, again, CopyOptions{}); !errors.Is(err, store.ErrTableExists) {
		t.Errorf("restore into a table with entities: %v; want ErrTableExists", err)
	}
	if err := s.Write(ctx, "acct", "Copy", []store.Op{{Kind: store.OpReplace, Entity: added}}); err != nil {
		t.Errorf("write after a refused restore: %v", err)
	}
	again.Merge = true
	if rep, err := s.RestoreTable(ctx, again, CopyOptions{}); err != nil || rep.Created || rep.Items != f.items {
		t.Fatalf("merging restore = %+v, %v", rep, err)
	}
	got, err := s.GetEntity(ctx, "acct", "Copy", changed.PartitionKey, changed.RowKey)
	if err != nil || entityDiff(got, f.written[0]) != "" {
		t.Errorf("merged entity: %+v, %v; want the restored version", got, err)
	}
	if _, err := s.GetEntity(ctx, "acct", "Copy", added.PartitionKey, added.RowKey); err != nil {
		t.Errorf("an entity the restore does not have, after a merge: %v", err)
	}

	for _, bad := range []struct {
		r    Restore
		want string
	}{
		{Restore{From: s.opts.SharedTable, ID: f.id, Account: "acct", Table: "Orders", As: "X"}, "not one of the deployment's own"},
		{Restore{From: f.restored, Account: "acct", Table: "Orders", As: "X"}, "give the table's id"},
		{Restore{From: f.restored, ID: "00000000000000aa", Catalog: f.restoredCatalog, Account: "acct", Table: "Orders", As: "X"}, "is not table"},
		{Restore{From: f.restored, Catalog: f.restoredCatalog, Account: "acct", Table: "Missing", As: "X"}, "has no table"},
		{Restore{From: s.opts.TablePrefix + "nowhere", ID: f.id, Account: "acct", Table: "Orders", As: "X"}, "nowhere"},
	} {
		if _, err := s.RestoreTable(ctx, bad.r, CopyOptions{}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("RestoreTable(%+v) = %v; want an error saying %q", bad.r, err, bad.want)
		}
	}
	if _, err := s.GetTable(ctx, "acct", "X"); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("a refused restore created its target: %v", err)
	}
}

// TestRestoreTableVerifiesAndResumes: a copy that is written wrong fails
// the verification and leaves the target frozen; a restore stopped half
// way leaves it frozen too; run again, each resumes and completes; one
// that will not be finished is abandoned.
func TestRestoreTableVerifiesAndResumes(t *testing.T) {
	t.Parallel()
	f := newRestoreFixture(t)
	s, ctx := f.s, f.ctx
	from := Restore{From: f.restored, Catalog: f.restoredCatalog, Account: "acct", Table: "Orders"}
	frozen := func(table string) {
		t.Helper()
		if err := s.Write(ctx, "acct", table, []store.Op{{Kind: store.OpInsert, Entity: newEntity("w", "w", nil)}}); !errors.Is(err, store.ErrBusy) {
			t.Errorf("write to %s while it is being restored: %v; want ErrBusy", table, err)
		}
		if _, err := s.GetEntity(ctx, "acct", table, "nothing", "here"); !errors.Is(err, store.ErrEntityNotFound) {
			t.Errorf("read of %s while it is being restored: %v; want ErrEntityNotFound", table, err)
		}
	}

	// A write path that changes one attribute of one item.
	corrupt := initHook("corrupt", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		if b, ok := in.Parameters.(*dynamodb.BatchWriteItemInput); ok {
			for _, reqs := range b.RequestItems {
				for _, r := range reqs {
					if r.PutRequest != nil && stringAttr(r.PutRequest.Item, attrRowKey) == "r07" {
						r.PutRequest.Item["S"] = str("corrupted")
					}
				}
			}
		}
		return next.HandleInitialize(ctx, in)
	})
	bad, err := New(ctx, dynamolocal.Client(t, corrupt), s.opts)
	if err != nil {
		t.Fatal(err)
	}
	from.As = "Verified"
	if _, err := bad.RestoreTable(ctx, from, CopyOptions{}); err == nil || !strings.Contains(err.Error(), `"r07")`) || !strings.Contains(err.Error(), "differ") {
		t.Fatalf("restore with a corrupted copy: %v; want the verification to name (p1, r07)", err)
	}
	frozen("Verified")
	if rep, err := s.RestoreTable(ctx, from, CopyOptions{}); err != nil || rep.Created || rep.Items != f.items {
		t.Fatalf("restore resumed after a failed verification = %+v, %v", rep, err)
	}
	f.wantRestored(t, s, "Verified")

	// A restore stopped after its first batch of writes.
	stop := func(table string) {
		t.Helper()
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var batches atomic.Int32
		stopper := initHook("stop", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			if _, ok := in.Parameters.(*dynamodb.BatchWriteItemInput); ok && batches.Add(1) == 1 {
				cancel()
			}
			return out, md, err
		})
		stopped, err := New(ctx, dynamolocal.Client(t, stopper), s.opts)
		if err != nil {
			t.Fatal(err)
		}
		from.As = table
		if _, err := stopped.RestoreTable(sctx, from, CopyOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("stopped restore: %v; want context.Canceled", err)
		}
		frozen(table)
	}
	stop("Stopped")
	from.As = "Stopped"
	if rep, err := s.RestoreTable(ctx, from, CopyOptions{}); err != nil || rep.Created || rep.Items != f.items {
		t.Fatalf("resumed restore = %+v, %v", rep, err)
	}
	f.wantRestored(t, s, "Stopped")
	if err := s.Write(ctx, "acct", "Stopped", []store.Op{{Kind: store.OpInsert, Entity: newEntity("w", "w", nil)}}); err != nil {
		t.Errorf("write after the resumed restore: %v", err)
	}

	stop("Abandoned")
	if was, err := s.AbandonRestore(ctx, "acct", "Abandoned"); !was || err != nil {
		t.Fatalf("AbandonRestore = %v, %v", was, err)
	}
	if err := s.Write(ctx, "acct", "Abandoned", []store.Op{{Kind: store.OpInsert, Entity: newEntity("w", "w", nil)}}); err != nil {
		t.Errorf("write after the restore was abandoned: %v", err)
	}
	if was, err := s.AbandonRestore(ctx, "acct", "Abandoned"); was || err != nil {
		t.Errorf("AbandonRestore of a table not being restored = %v, %v", was, err)
	}
	// Another restore's target is not taken over.
	other := from
	other.As, other.From, other.Catalog, other.ID = "Verified", f.restoredNoIndex, "", f.id
	entry, _ := s.readEntry(ctx, "test", "acct", "Verified")
	next := maps.Clone(entry)
	next[catRestoring], next[catRev] = str(f.restored+"/"+sharedPrefix("acct", f.id)), str(newGen())
	if err := s.replaceEntry(ctx, "test", "acct", "Verified", entry, next); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RestoreTable(ctx, other, CopyOptions{}); !errors.Is(err, store.ErrBusy) || !strings.Contains(err.Error(), "being restored from "+f.restored) {
		t.Errorf("restore into a table another restore holds: %v; want ErrBusy naming it", err)
	}
}

// TestRestoreTableFromPerTable restores a placement (an earlier release's
// table in a DynamoDB table of its own) from a point-in-time copy of that
// DynamoDB table into the shared table, under a new name.
func TestRestoreTableFromPerTable(t *testing.T) {
	t.Parallel()
	s := newTestStore(t)
	ctx := dynamolocal.Context(t, testTimeout)
	phys := createPlacement(t, s, "acct", "Legacy", true)
	var written []*model.Entity
	for i := range 12 {
		e := newEntity(fmt.Sprintf("p%d", i%3), fmt.Sprintf("r%02d", i), props{"N": edm.NewInt32(int32(i))})
		written = append(written, e)
		if err := s.Write(ctx, "acct", "Legacy", []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
			t.Fatal(err)
		}
	}
	restored := s.opts.TablePrefix + "legacy-restored"
	if err := dynamolocal.RestoreCopy(ctx, dynamolocal.Client(t), phys, restored, true); err != nil {
		t.Fatal(err)
	}
	r := Restore{From: restored, ID: "00000000000000aa", Account: "acct", Table: "Legacy", As: "Restored"}
	if _, err := s.RestoreTable(ctx, r, CopyOptions{}); err == nil || !strings.Contains(err.Error(), "not a restored shared table") {
		t.Errorf("an id with a per-table source: %v", err)
	}
	r.ID, r.Catalog = "", s.opts.CatalogTable // the catalog as it is: Legacy has no id
	rep, err := s.RestoreTable(ctx, r, CopyOptions{})
	if err != nil || !rep.Created || rep.Items != len(written) {
		t.Fatalf("RestoreTable = %+v, %v", rep, err)
	}
	for _, e := range written {
		got, err := s.GetEntity(ctx, "acct", "Restored", e.PartitionKey, e.RowKey)
		if err != nil || entityDiff(got, e) != "" {
			t.Errorf("(%q, %q) restored: %+v, %v", e.PartitionKey, e.RowKey, got, err)
		}
	}
	loc, err := s.locate(ctx, "acct", "Restored")
	if err != nil || loc.table != s.opts.SharedTable {
		t.Errorf("the restored table is at %+v, %v; want the shared table", loc, err)
	}
}
