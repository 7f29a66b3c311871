package migrate_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// fastRetries keeps the SDK's back-off short in tests.
var fastRetries = migrate.EndpointOptions{MaxRetries: 3, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}

// fastBackoff keeps the engine's back-off short in tests.
var fastBackoff = migrate.Backoff{Attempts: 6, Base: time.Millisecond, Max: 10 * time.Millisecond}

func openEndpoint(t testing.TB, spec string) *migrate.Endpoint {
	t.Helper()
	ep, err := migrate.OpenEndpoint(spec, fastRetries)
	if err != nil {
		t.Fatalf("OpenEndpoint: %v", err)
	}
	return ep
}

func openBolt(t testing.TB) store.Store {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "dest.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func storeIO(t testing.TB, st store.Store) *migrate.StoreIO {
	t.Helper()
	io, err := migrate.NewStoreIO(st, account, "test store", nil)
	if err != nil {
		t.Fatal(err)
	}
	return io
}

func ctxFor(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// fixture is a source tablebridge holding the edge table and bulk tables.
type fixture struct {
	src    *protocoltest.Server
	tables map[string][]*model.Entity
	total  int
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{src: protocoltest.New(t), tables: map[string][]*model.Entity{
		"Edges":  edgeEntities(t),
		"Orders": bulkEntities(3000, 30),
		"Users":  bulkEntities(2500, 2500),
		"Events": bulkEntities(1200, 3),
	}}
	for name, entities := range f.tables {
		seed(t, f.src.Store, name, entities)
		f.total += len(entities)
	}
	return f
}

func (f *fixture) assertCopied(t testing.TB, dest store.Store, rename map[string]string) {
	t.Helper()
	for name, want := range f.tables {
		to := name
		if r, ok := rename[name]; ok {
			to = r
		}
		assertSameEntities(t, to, want, readAll(t, dest, to))
	}
}

// verifyClean runs Verify and fails on any difference.
func verifyClean(t testing.TB, opts migrate.VerifyOptions) {
	t.Helper()
	var diffs []string
	opts.Report = func(d migrate.Difference) { diffs = append(diffs, d.String()) }
	res, err := migrate.Verify(ctxFor(t), opts)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if res.Differences != 0 {
		if len(diffs) > 10 {
			diffs = diffs[:10]
		}
		t.Fatalf("Verify found %d differences:\n%s", res.Differences, strings.Join(diffs, "\n"))
	}
}

func TestMigrateEndpointToEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dst := protocoltest.New(t)
	cp := filepath.Join(t.TempDir(), "cp.json")
	opts := migrate.Options{
		Source:     openEndpoint(t, f.src.ConnectionString()),
		Dest:       openEndpoint(t, dst.ConnectionString()),
		Checkpoint: cp,
		PageSize:   200, // so 3000 entities split into 4 ranges
		Rename:     map[string]string{"users": "People"},
		Backoff:    fastBackoff,
	}
	res, err := migrate.Migrate(ctxFor(t), opts)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if res.Entities != int64(f.total) {
		t.Errorf("Result.Entities = %d, want %d", res.Entities, f.total)
	}
	rename := map[string]string{"Users": "People"}
	f.assertCopied(t, dst.Store, rename)
	verifyClean(t, migrate.VerifyOptions{Source: opts.Source, Dest: openEndpoint(t, dst.ConnectionString()), Rename: opts.Rename})

	t.Run("checkpoint records the split and the end", func(t *testing.T) {
		c, err := migrate.LoadCheckpoint(cp)
		if err != nil {
			t.Fatal(err)
		}
		for _, tbl := range c.Tables {
			if !tbl.Done || tbl.Copied() != int64(len(f.tables[tbl.Source])) || tbl.Total != tbl.Copied() {
				t.Errorf("table %s: done %v, copied %d, total %d; want %d", tbl.Source, tbl.Done, tbl.Copied(), tbl.Total, len(f.tables[tbl.Source]))
			}
			if tbl.Source == "Orders" && len(tbl.Ranges) != 4 {
				t.Errorf("Orders was read in %d ranges, want 4", len(tbl.Ranges))
			}
		}
	})
	t.Run("a second run finds everything done", func(t *testing.T) {
		res, err := migrate.Migrate(ctxFor(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range res.Tables {
			if !tr.AlreadyDone || tr.Entities != 0 {
				t.Errorf("table %s: %+v, want already done", tr.Source, tr)
			}
		}
	})
}

func TestMigrateEndpointToBolt(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	dest := openBolt(t)
	src := openEndpoint(t, f.src.ConnectionString())
	_, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: src, Dest: storeIO(t, dest)})
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	f.assertCopied(t, dest, nil)
	verifyClean(t, migrate.VerifyOptions{Source: src, Dest: storeIO(t, dest)})
}

func TestMigrateEndpointToDynamoDB(t *testing.T) {
	t.Parallel()
	client := dynamolocal.Client(t, func(o *dynamodb.Options) {})
	ctx := ctxFor(t)
	dest, err := dynamostore.New(ctx, client, dynamostore.Options{TablePrefix: dynamolocal.UniqueName("mig"), Endpoint: dynamolocal.Endpoint(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dest.Close() })
	f := &fixture{src: protocoltest.New(t), tables: map[string][]*model.Entity{
		"Edges":  edgeEntities(t),
		"Orders": bulkEntities(1500, 15),
	}}
	for name, entities := range f.tables {
		seed(t, f.src.Store, name, entities)
	}
	src := openEndpoint(t, f.src.ConnectionString())
	if _, err := migrate.Migrate(ctx, migrate.Options{Source: src, Dest: storeIO(t, dest), Backoff: fastBackoff}); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	f.assertCopied(t, dest, nil)
	// DynamoDB returns partitions in hash order; verify does not mind.
	verifyClean(t, migrate.VerifyOptions{Source: src, Dest: storeIO(t, dest)})
}

func TestMigrateSASSources(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	want := bulkEntities(300, 4)
	seed(t, src.Store, "Orders", want)
	seed(t, src.Store, "Other", bulkEntities(5, 1))
	key := auth.DevStoreAccount().Keys[0]
	expiry := time.Now().Add(time.Hour)
	t.Run("account SAS URL", func(t *testing.T) {
		q, err := auth.NewAccountSAS(account, key, auth.AccountSASValues{ResourceTypes: "sco", Permissions: "rl", Expiry: expiry})
		if err != nil {
			t.Fatal(err)
		}
		dst := protocoltest.New(t)
		_, err = migrate.Migrate(ctxFor(t), migrate.Options{
			Source: openEndpoint(t, src.AccountURL(account)+"?"+q.Encode()),
			Dest:   openEndpoint(t, dst.ConnectionString()),
			Tables: []string{"ORDERS"},
		})
		if err != nil {
			t.Fatal(err)
		}
		assertSameEntities(t, "Orders", want, readAll(t, dst.Store, "Orders"))
	})
	t.Run("table SAS URL reaches its one table", func(t *testing.T) {
		q, err := auth.NewTableSAS(account, key, auth.TableSASValues{Table: "Orders", Permissions: "r", Expiry: expiry})
		if err != nil {
			t.Fatal(err)
		}
		dst := protocoltest.New(t)
		res, err := migrate.Migrate(ctxFor(t), migrate.Options{
			Source: openEndpoint(t, src.AccountURL(account)+"/Orders?"+q.Encode()),
			Dest:   openEndpoint(t, dst.ConnectionString()),
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Tables) != 1 || res.Tables[0].Source != "Orders" {
			t.Fatalf("tables = %+v, want Orders only", res.Tables)
		}
		assertSameEntities(t, "Orders", want, readAll(t, dst.Store, "Orders"))
	})
}

func TestMigrateDryRun(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	seed(t, src.Store, "Orders", bulkEntities(1500, 3))
	dst := protocoltest.New(t)
	cp := filepath.Join(t.TempDir(), "cp.json")
	res, err := migrate.Migrate(ctxFor(t), migrate.Options{
		Source:     openEndpoint(t, src.ConnectionString()),
		Dest:       openEndpoint(t, dst.ConnectionString()),
		DryRun:     true,
		Checkpoint: cp,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Entities != 1500 {
		t.Errorf("dry run counted %d, want 1500", res.Entities)
	}
	if _, err := dst.Store.GetTable(context.Background(), account, "Orders"); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("dry run created the table: %v", err)
	}
	if c, err := migrate.LoadCheckpoint(cp); c != nil || err != nil {
		t.Errorf("dry run wrote a checkpoint: %v, %v", c, err)
	}
	t.Run("without a destination", func(t *testing.T) {
		if _, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: openEndpoint(t, src.ConnectionString()), DryRun: true}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMigrateKeepTimestamp(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	want := bulkEntities(50, 2)
	seed(t, src.Store, "Orders", want)
	dst := protocoltest.New(t)
	opts := migrate.Options{
		Source:        openEndpoint(t, src.ConnectionString()),
		Dest:          openEndpoint(t, dst.ConnectionString()),
		KeepTimestamp: "SourceTimestamp",
	}
	if _, err := migrate.Migrate(ctxFor(t), opts); err != nil {
		t.Fatal(err)
	}
	srcAll := readAll(t, src.Store, "Orders")
	for k, e := range readAll(t, dst.Store, "Orders") {
		v, ok := e.Properties["SourceTimestamp"]
		if !ok || v.Type != edm.DateTime || !v.Time.Equal(srcAll[k].Timestamp) {
			t.Fatalf("%q: SourceTimestamp = %+v, want %v", k, v, srcAll[k].Timestamp)
		}
		if e.Timestamp.Equal(srcAll[k].Timestamp) {
			t.Fatalf("%q: the destination kept the source Timestamp; it must assign its own", k)
		}
	}
	verifyClean(t, migrate.VerifyOptions{Source: opts.Source, Dest: openEndpoint(t, dst.ConnectionString()), KeepTimestamp: "SourceTimestamp"})

	t.Run("a taken name fails the table", func(t *testing.T) {
		_, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: opts.Source, Dest: openEndpoint(t, protocoltest.New(t).ConnectionString()), KeepTimestamp: "Name"})
		if err == nil || !strings.Contains(err.Error(), `already has a property "Name"`) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestMigrateRejects(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	seed(t, src.Store, "Orders", bulkEntities(3, 1))
	seed(t, src.Store, "Users", bulkEntities(3, 1))
	srcEP := openEndpoint(t, src.ConnectionString())
	dstEP := openEndpoint(t, protocoltest.New(t).ConnectionString())
	tests := []struct {
		name    string
		opts    migrate.Options
		wantErr string
	}{
		{"no source", migrate.Options{Dest: dstEP}, "no source"},
		{"no destination", migrate.Options{Source: srcEP}, "no destination"},
		{"unknown table", migrate.Options{Source: srcEP, Dest: dstEP, Tables: []string{"Nope"}}, `table "Nope" is not in`},
		{"two tables into one", migrate.Options{Source: srcEP, Dest: dstEP, Rename: map[string]string{"Users": "Orders"}}, "would both be written"},
		{"rename of an unselected table", migrate.Options{Source: srcEP, Dest: dstEP, Tables: []string{"Orders"}, Rename: map[string]string{"Users": "People"}}, "not being migrated"},
		{"invalid destination name", migrate.Options{Source: srcEP, Dest: dstEP, Rename: map[string]string{"Users": "1bad"}}, "destination table name"},
		{"invalid keep-timestamp", migrate.Options{Source: srcEP, Dest: dstEP, KeepTimestamp: "Timestamp"}, "system property"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := migrate.Migrate(ctxFor(t), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
	t.Run("checkpoint of another migration", func(t *testing.T) {
		cp := filepath.Join(t.TempDir(), "cp.json")
		if _, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: srcEP, Dest: dstEP, Checkpoint: cp}); err != nil {
			t.Fatal(err)
		}
		other := openEndpoint(t, protocoltest.New(t).ConnectionString())
		for name, opts := range map[string]migrate.Options{
			"other destination":    {Source: srcEP, Dest: other, Checkpoint: cp},
			"other keep-timestamp": {Source: srcEP, Dest: dstEP, Checkpoint: cp, KeepTimestamp: "Ts"},
			"other rename":         {Source: srcEP, Dest: dstEP, Checkpoint: cp, Rename: map[string]string{"Orders": "Orders2"}},
		} {
			if _, err := migrate.Migrate(ctxFor(t), opts); err == nil || !strings.Contains(err.Error(), "-restart") {
				t.Errorf("%s: err = %v, want a refusal naming -restart", name, err)
			}
		}
		// -restart starts over.
		if _, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: srcEP, Dest: other, Checkpoint: cp, Restart: true}); err != nil {
			t.Fatalf("Restart: %v", err)
		}
	})
	t.Run("corrupt checkpoint", func(t *testing.T) {
		cp := filepath.Join(t.TempDir(), "cp.json")
		writeFile(t, cp, "{not json")
		if _, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: srcEP, Dest: dstEP, Checkpoint: cp}); err == nil {
			t.Fatal("a corrupt checkpoint was accepted")
		}
	})
	t.Run("unreachable source", func(t *testing.T) {
		dead := openEndpoint(t, "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="+auth.DevStoreAccountKey+";TableEndpoint=http://127.0.0.1:1/devstoreaccount1")
		if _, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: dead, Dest: dstEP, Backoff: fastBackoff}); err == nil {
			t.Fatal("no error")
		}
	})
}
