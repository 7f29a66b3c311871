package migrate_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/testserver"
	"github.com/tablebridge/tablebridge/shared/migrate"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

// fastRetries keeps the SDK's back-off short in tests.
var fastRetries = migrate.EndpointOptions{MaxRetries: 3, RetryDelay: 10 * time.Millisecond, MaxRetryDelay: 50 * time.Millisecond}

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

// fixture is a source tablebridge holding the edge table and bulk tables.
type fixture struct {
	src    *testserver.Server
	tables map[string][]*model.Entity
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{src: testserver.New(t), tables: map[string][]*model.Entity{
		"Edges":  edgeEntities(t),
		"Orders": bulkEntities(3000, 30),
		"Users":  bulkEntities(2500, 2500),
		"Events": bulkEntities(1200, 3),
	}}
	for name, entities := range f.tables {
		seed(t, f.src.Store, name, entities)
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

func TestMigrateEndpointToEndpoint(t *testing.T) {
	f := newFixture(t)
	dst := testserver.New(t)
	ctx := context.Background()
	res, err := migrate.Migrate(ctx, migrate.Options{
		Source:     openEndpoint(t, f.src.ConnectionString()),
		Dest:       openEndpoint(t, dst.ConnectionString()),
		Checkpoint: filepath.Join(t.TempDir(), "cp.json"),
		PageSize:   200,
		Rename:     map[string]string{"users": "People"},
	})
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	var total int
	for _, e := range f.tables {
		total += len(e)
	}
	if res.Entities != int64(total) {
		t.Errorf("Result.Entities = %d, want %d", res.Entities, total)
	}
	f.assertCopied(t, dst.Store, map[string]string{"Users": "People"})
}

func TestMigrateEndpointToBolt(t *testing.T) {
	f := newFixture(t)
	dest := openBolt(t)
	_, err := migrate.Migrate(context.Background(), migrate.Options{
		Source: openEndpoint(t, f.src.ConnectionString()),
		Dest:   storeIO(t, dest),
	})
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	f.assertCopied(t, dest, nil)
}
