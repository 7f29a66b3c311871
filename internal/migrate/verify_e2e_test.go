package migrate_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// plant applies one change to a destination store.
func plant(t *testing.T, st store.Store, table string, op store.Op) {
	t.Helper()
	op.Entity.Timestamp = time.Now().UTC().Truncate(100 * time.Nanosecond)
	if err := st.Write(context.Background(), account, table, []store.Op{op}); err != nil {
		t.Fatalf("plant in %s: %v", table, err)
	}
}

func changed(t *testing.T, st store.Store, table, pk, rk string, change func(e *model.Entity)) store.Op {
	t.Helper()
	e, err := st.GetEntity(context.Background(), account, table, pk, rk)
	if err != nil {
		t.Fatal(err)
	}
	e = e.Clone()
	change(e)
	return store.Op{Kind: store.OpReplace, Entity: e}
}

func TestVerifyFindsEveryDifference(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	seed(t, src.Store, "Orders", bulkEntities(600, 6))
	seed(t, src.Store, "Edges", edgeEntities(t))
	seed(t, src.Store, "Lonely", bulkEntities(7, 1))
	dest := openBolt(t)
	srcEP := openEndpoint(t, src.ConnectionString())
	if _, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: srcEP, Dest: storeIO(t, dest), Tables: []string{"Orders", "Edges"}}); err != nil {
		t.Fatal(err)
	}
	// The plants.
	plant(t, dest, "Orders", changed(t, dest, "Orders", "p0001", "r0000001", func(e *model.Entity) { e.Properties["Index"] = edm.NewInt32(999) }))
	plant(t, dest, "Orders", changed(t, dest, "Orders", "p0002", "r0000002", func(e *model.Entity) { e.Properties["Whole"] = edm.NewInt32(2) }))
	plant(t, dest, "Orders", changed(t, dest, "Orders", "p0003", "r0000003", func(e *model.Entity) {
		delete(e.Properties, "Name")
		e.Properties["Extra"] = edm.NewString("x")
	}))
	plant(t, dest, "Orders", store.Op{Kind: store.OpDelete, Entity: &model.Entity{PartitionKey: "p0004", RowKey: "r0000004"}})
	plant(t, dest, "Orders", store.Op{Kind: store.OpInsert, Entity: &model.Entity{PartitionKey: "p0005", RowKey: "zz-extra", Properties: map[string]edm.Value{}}})
	plant(t, dest, "Edges", changed(t, dest, "Edges", "", "", func(e *model.Entity) { e.Properties["DoubleNZero"] = edm.NewDouble(0) }))
	if _, err := dest.CreateTable(context.Background(), account, "Stray"); err != nil {
		t.Fatal(err)
	}
	want := []string{ // sorted
		`Edges: differs PartitionKey='' RowKey='': property DoubleNZero: source Edm.Double -0.0, dest Edm.Double 0.0`,
		`Lonely: table missing in dest (7 entities)`,
		`Orders: differs PartitionKey='p0001' RowKey='r0000001': property Index: source Edm.Int32 1, dest Edm.Int32 999`,
		`Orders: differs PartitionKey='p0002' RowKey='r0000002': property Whole: source Edm.Double 2.0, dest Edm.Int32 2`,
		`Orders: differs PartitionKey='p0003' RowKey='r0000003': property Extra: source absent, dest Edm.String "x"`,
		`Orders: differs PartitionKey='p0003' RowKey='r0000003': property Name: source Edm.String "entity number 3", dest absent`,
		`Orders: extra in dest PartitionKey='p0005' RowKey='zz-extra'`,
		`Orders: missing in dest PartitionKey='p0004' RowKey='r0000004'`,
		`Stray: table extra in dest (0 entities)`,
	}
	for _, tt := range []struct {
		name    string
		buckets int
		budget  int64
	}{
		{"defaults", 0, 0},
		{"few buckets, one round each", 3, 1},
		{"one bucket", 1, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			res, err := migrate.Verify(ctxFor(t), migrate.VerifyOptions{
				Source: srcEP, Dest: storeIO(t, dest),
				Buckets: tt.buckets, MemoryBudget: tt.budget,
				Report: func(d migrate.Difference) { got = append(got, d.String()) },
			})
			if err != nil {
				t.Fatal(err)
			}
			// A table's differences come in key order.
			var orders []string
			for _, g := range got {
				if strings.HasPrefix(g, "Orders:") {
					orders = append(orders, g[strings.Index(g, "PartitionKey="):])
				}
			}
			if !slices.IsSorted(orders) {
				t.Errorf("Orders' differences are not in key order:\n%s", strings.Join(orders, "\n"))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if res.Differences != int64(len(want)) {
				t.Errorf("Differences = %d, want %d", res.Differences, len(want))
			}
			// The tables' counts add up to the total, the table only the
			// destination has included.
			var sum int64
			for _, tv := range res.Tables {
				sum += tv.Differences
				if tv.Source == "Orders" && (tv.SourceEntities != 600 || tv.DestEntities != 600 || tv.Differences != 6) {
					t.Errorf("Orders: %+v", tv)
				}
			}
			if sum != res.Differences || len(res.Tables) != 4 {
				t.Errorf("%d tables with %d differences in all; the result says %d: %+v", len(res.Tables), sum, res.Differences, res.Tables)
			}
		})
	}
	t.Run("selected tables skip the extra-table check and cap the list", func(t *testing.T) {
		var got []string
		res, err := migrate.Verify(ctxFor(t), migrate.VerifyOptions{
			Source: srcEP, Dest: storeIO(t, dest), Tables: []string{"orders"}, MaxDiffs: 2,
			Report: func(d migrate.Difference) { got = append(got, d.String()) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || res.Differences != 6 {
			t.Fatalf("listed %d, counted %d; want 2 listed of 6", len(got), res.Differences)
		}
	})
}

func TestVerifyMatchesAcrossOrders(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	want := bulkEntities(900, 9)
	seed(t, src.Store, "Orders", want)
	dest := openBolt(t)
	srcEP := openEndpoint(t, src.ConnectionString())
	if _, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: srcEP, Dest: storeIO(t, dest)}); err != nil {
		t.Fatal(err)
	}
	// A destination that returns every page backwards and the pages in a
	// scrambled key order still matches.
	verifyClean(t, migrate.VerifyOptions{Source: srcEP, Dest: reversed{storeIO(t, dest)}, PageSize: 50})
}

// reversed returns each page's entities in reverse order, as a hash-ordered
// store would return them in an order unrelated to the keys.
type reversed struct{ migrate.Source }

func (r reversed) ReadPage(ctx context.Context, table string, req migrate.PageRequest) (migrate.Page, error) {
	p, err := r.Source.ReadPage(ctx, table, req)
	slices.Reverse(p.Entities)
	return p, err
}

func TestVerifyErrors(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	seed(t, src.Store, "Orders", bulkEntities(3, 1))
	srcEP := openEndpoint(t, src.ConnectionString())
	dstEP := openEndpoint(t, protocoltest.New(t).ConnectionString())
	for name, opts := range map[string]migrate.VerifyOptions{
		"no destination":       {Source: srcEP},
		"unknown table":        {Source: srcEP, Dest: dstEP, Tables: []string{"Nope"}},
		"bad keep-timestamp":   {Source: srcEP, Dest: dstEP, KeepTimestamp: "Row-Key"},
		"unreachable dest":     {Source: srcEP, Dest: openEndpoint(t, "AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:1/devstoreaccount1"), Backoff: fastBackoff},
		"keep-timestamp taken": {Source: srcEP, Dest: dstEP, KeepTimestamp: "Name"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := migrate.Verify(ctxFor(t), opts); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestDifferenceString(t *testing.T) {
	t.Parallel()
	nan := edm.NewDouble(math.NaN())
	long := edm.NewString(strings.Repeat("x", 200))
	tests := []struct {
		d    migrate.Difference
		want string
	}{
		{migrate.Difference{Kind: migrate.MissingInDest, Table: "A", DestTable: "B", PartitionKey: "it's", RowKey: ""}, `A -> B: missing in dest PartitionKey='it''s' RowKey=''`},
		{migrate.Difference{Kind: migrate.PropertyDiffers, Table: "A", DestTable: "A", Property: "P", Source: &nan}, `A: differs PartitionKey='' RowKey='': property P: source Edm.Double "NaN", dest absent`},
		{migrate.Difference{Kind: migrate.PropertyDiffers, Table: "A", Property: "P", Dest: &long}, `A: differs PartitionKey='' RowKey='': property P: source absent, dest Edm.String "` + strings.Repeat("x", 76) + `...`},
		{migrate.Difference{Kind: migrate.ExtraInDest, WholeTable: true, DestTable: "S", Entities: 3}, `S: table extra in dest (3 entities)`},
	}
	for _, tt := range tests {
		if got := tt.d.String(); got != tt.want {
			t.Errorf("String() = %s\nwant       %s", got, tt.want)
		}
	}
	if migrate.DiffKind(9).String() != "DiffKind(9)" {
		t.Error("unknown kind")
	}
}

// TestStoreCopyKeepsTimestamps: a copy between two stores with
// KeepTimestamps stores every entity, edge cases included, with its own
// Timestamp, and a verify with CompareTimestamps matches it, then names a
// Timestamp that differs.
func TestStoreCopyKeepsTimestamps(t *testing.T) {
	t.Parallel()
	src := openBolt(t)
	seed(t, src, "Edges", edgeEntities(t))
	seed(t, src, "Orders", bulkEntities(300, 3))
	dest := openBolt(t)
	destIO := storeIO(t, dest)
	destIO.KeepTimestamps = true
	if _, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: storeIO(t, src), Dest: destIO}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"Edges", "Orders"} {
		want, got := readAll(t, src, table), readAll(t, dest, table)
		if len(got) != len(want) {
			t.Fatalf("%s: %d entities copied of %d", table, len(got), len(want))
		}
		for k, e := range want {
			if !got[k].Timestamp.Equal(e.Timestamp) {
				t.Errorf("%s %q: Timestamp %v copied as %v", table, k, e.Timestamp, got[k].Timestamp)
			}
		}
	}
	res, err := migrate.Verify(ctxFor(t), migrate.VerifyOptions{Source: storeIO(t, src), Dest: storeIO(t, dest), CompareTimestamps: true})
	if err != nil || res.Differences != 0 {
		t.Fatalf("verify of the copy: %v, %v", res, err)
	}
	plant(t, dest, "Orders", changed(t, dest, "Orders", "p0001", "r0000001", func(*model.Entity) {}))
	var diffs []string
	res, err = migrate.Verify(ctxFor(t), migrate.VerifyOptions{Source: storeIO(t, src), Dest: storeIO(t, dest), CompareTimestamps: true,
		Report: func(d migrate.Difference) { diffs = append(diffs, d.String()) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Differences != 1 || len(diffs) != 1 || !strings.Contains(diffs[0], "property Timestamp") {
		t.Errorf("verify after a Timestamp changed: %d differences %q; want the Timestamp's", res.Differences, diffs)
	}
}
