package dynamostore

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestDoublesThroughDynamoDB round-trips doubles whose stored N DynamoDB
// normalizes (3e+06 comes back as 3000000), next to the Int32s they must
// not turn into.
func TestDoublesThroughDynamoDB(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	values := props{
		"D3e6":       edm.NewDouble(3e6),
		"D1e20":      edm.NewDouble(1e20),
		"D1e21":      edm.NewDouble(1e21),
		"DMaxInt32":  edm.NewDouble(math.MaxInt32),
		"DMinInt32":  edm.NewDouble(math.MinInt32),
		"DBeyond":    edm.NewDouble(2147483648),
		"DHalf":      edm.NewDouble(-0.5),
		"D1e125":     edm.NewDouble(9.999999999999999e125),
		"D1e-130":    edm.NewDouble(1e-130),
		"DBelow":     edm.NewDouble(9.99e-131),
		"DSubnormal": edm.NewDouble(math.SmallestNonzeroFloat64),
		"DMax":       edm.NewDouble(math.MaxFloat64),
		"DNegZero":   edm.NewDouble(math.Copysign(0, -1)),
		"DNaN":       edm.NewDouble(math.NaN()),
		"DInf":       edm.NewDouble(math.Inf(1)),
		"I3e6":       edm.NewInt32(3000000),
		"IMin":       edm.NewInt32(math.MinInt32),
		"LMin":       edm.NewInt64(math.MinInt64),
		"LMax":       edm.NewInt64(math.MaxInt64),
		"L1e6":       edm.NewInt64(1000000),
	}
	e := newEntity("doubles", "all", values)
	env.insert(e)
	env.wantStored(e)
	// A merge writes the same encodings through UpdateItem.
	m := newEntity("doubles", "merged", nil)
	env.insert(m)
	patch := newEntity("doubles", "merged", values)
	env.mustWrite(store.Op{Kind: store.OpMerge, Entity: patch, Cond: store.CondExists})
	env.wantStored(patch)
}

// TestPropertyNames uses property names that are DynamoDB reserved words or
// look like system attributes, and non-ASCII identifiers, through every
// write kind (a merge names them in an UpdateExpression).
func TestPropertyNames(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	names := []string{"Size", "Name", "Count", "Status", "Date", "Value", "Key", "Table", "Data", "Year",
		"Order", "Group", "Select", "Delete", "Update", "Timestamps", "TimeStamp", "PartitionKeyCopy", "names",
		"chunks", "gen", "_underscore", "Ünïcödé", "名前", "a", strings.Repeat("N", 255)}
	p := props{}
	for i, n := range names {
		p[n] = edm.NewInt32(int32(i))
	}
	e := newEntity("names", "e", p)
	env.insert(e)
	env.wantStored(e)
	patch := props{}
	for _, n := range names {
		patch[n] = edm.NewString(n)
	}
	merge := newEntity("names", "e", patch)
	env.mustWrite(store.Op{Kind: store.OpMerge, Entity: merge, Cond: store.CondTimestamp, Timestamp: e.Timestamp})
	env.wantStored(merge)
	page, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{
		Keys: pkRange("names"), Top: 10,
		Match: func(e *model.Entity) bool { return e.Properties["Size"].Str == "Size" },
	})
	if err != nil || len(page.Entities) != 1 {
		t.Fatalf("query = %d entities, %v", len(page.Entities), err)
	}
	err = env.write(store.Op{Kind: store.OpInsert, Entity: newEntity("names", "bad", props{"$names": edm.NewInt32(1)})})
	if err == nil {
		t.Error("a '$' property name was stored; it would collide with system attributes")
	}
}

// TestKeyLimits: keys up to DynamoDB's limits are stored, and longer ones
// get ErrKeyTooLong, in a placement (2,048 bytes of PartitionKey) and in
// the shared table (2,048 bytes less the table's key prefix).
func TestKeyLimits(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) {
			env := layout.newEnv(t, newTestStore(t))
			loc, err := env.s.locate(env.ctx, env.account, env.table)
			if err != nil {
				t.Fatal(err)
			}
			testKeyLimits(t, env, loc.maxPKBytes())
		})
	}
}

func testKeyLimits(t *testing.T, env *testEnv, pkLimit int) {
	cases := []struct {
		name    string
		pk, rk  string
		props   props
		wantErr error
	}{
		{"PartitionKeyAtLimit", strings.Repeat("p", pkLimit), "r", nil, nil},
		{"PartitionKeyThreeByteAtLimit", strings.Repeat("中", pkLimit/3), "r", nil, nil},
		{"PartitionKeyOverLimit", strings.Repeat("p", pkLimit+1), "r", nil, store.ErrKeyTooLong},
		{"RowKeyAtLimit", "p", strings.Repeat("r", 1024), nil, nil},
		{"RowKeyOneKiBCharsTooLong", "p", strings.Repeat("é", 1024), nil, store.ErrKeyTooLong}, // Azure-legal, 2048 bytes
		{"RowKeyAtLimitChunked", "p", strings.Repeat("s", 1022), binaries(8, 60<<10), nil},
		{"RowKeyTooLongToChunk", "p", strings.Repeat("t", 1023), binaries(8, 60<<10), store.ErrKeyTooLong},
		{"EmptyKeys", "", "", props{"A": edm.NewBoolean(true)}, nil},
		{"EmptyKeysChunked", "", "x", binaries(8, 60<<10), nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEntity(c.pk, c.rk, c.props)
			err := env.write(store.Op{Kind: store.OpInsert, Entity: e})
			if c.wantErr != nil {
				var opErr *store.OpError
				if !errors.As(err, &opErr) || opErr.Index != 0 || !errors.Is(err, c.wantErr) {
					t.Fatalf("Write = %v; want OpError at 0 wrapping %v", err, c.wantErr)
				}
				// A key DynamoDB cannot hold cannot be read either; a key
				// only too long for overflow items can.
				wantGet := store.ErrEntityNotFound
				if len(c.pk) > pkLimit || len(c.rk) > maxRangeKeyBytes {
					wantGet = store.ErrKeyTooLong
				}
				if _, err := env.s.GetEntity(env.ctx, env.account, env.table, c.pk, c.rk); !errors.Is(err, wantGet) {
					t.Errorf("GetEntity = %v; want %v", err, wantGet)
				}
				return
			}
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			env.wantStored(e)
		})
	}
}

func TestQueryEdges(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	for _, rk := range []string{"", "a", "b", "c"} {
		env.insert(newEntity("p", rk, nil))
		env.insert(newEntity("q", rk, nil))
	}
	bound := func(v string, incl bool) *model.Bound { return &model.Bound{Value: v, Inclusive: incl} }
	t.Run("EmptyRangeOnMissingTable", func(t *testing.T) {
		for _, q := range []store.Query{
			{Keys: model.KeyRange{PartitionKey: model.Bounds{Lower: bound("b", false), Upper: bound("a", false)}}, Top: 5},
			{Keys: model.KeyRange{PartitionKey: model.Bounds{Lower: bound("p", true), Upper: bound("p", true)},
				RowKey: model.Bounds{Lower: bound("b", false), Upper: bound("b", false)}}, Top: 5},
		} {
			if _, err := env.s.QueryEntities(env.ctx, env.account, "Missing", q); !errors.Is(err, store.ErrTableNotFound) {
				t.Errorf("QueryEntities(%+v) on a missing table = %v; want ErrTableNotFound", q.Keys, err)
			}
			page, err := env.s.QueryEntities(env.ctx, env.account, env.table, q)
			if err != nil || len(page.Entities) != 0 || page.Next != nil {
				t.Errorf("QueryEntities(%+v) = %+v, %v; want an empty last page", q.Keys, page, err)
			}
		}
	})
	t.Run("CursorBeyondPartition", func(t *testing.T) {
		q := store.Query{Keys: pkRange("p"), Top: 5, After: &store.Cursor{PartitionKey: "pz", RowKey: ""}}
		if page, err := env.s.QueryEntities(env.ctx, env.account, env.table, q); err != nil || len(page.Entities) != 0 || page.Next != nil {
			t.Errorf("cursor past the partition = %d entities, %v, %v", len(page.Entities), page.Next, err)
		}
		q.After = &store.Cursor{PartitionKey: "a", RowKey: "zzz"}
		if page, err := env.s.QueryEntities(env.ctx, env.account, env.table, q); err != nil || len(page.Entities) != 4 {
			t.Errorf("cursor before the partition = %d entities, %v; want all 4", len(page.Entities), err)
		}
	})
	t.Run("ScanResumesAfterCursor", func(t *testing.T) {
		first, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{Top: 3})
		if err != nil || len(first.Entities) != 3 || first.Next == nil {
			t.Fatalf("first page = %d entities, %v, %v", len(first.Entities), first.Next, err)
		}
		rest := queryAll(t, env, store.Query{Top: 2, After: first.Next})
		seen := map[[2]string]bool{}
		for _, e := range append(first.Entities, rest...) {
			k := [2]string{e.PartitionKey, e.RowKey}
			if seen[k] {
				t.Fatalf("%q returned twice", k)
			}
			seen[k] = true
		}
		if len(seen) != 8 {
			t.Errorf("%d entities over all pages; want 8", len(seen))
		}
	})
	t.Run("SelectiveFilterReadsOnePage", func(t *testing.T) {
		counter := newCallCounter()
		s := newTestStore(t, counter.option)
		env := newEnv(t, s)
		var ops []store.Op
		for i := range 100 {
			ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity("f", string(rune('A'+i/26))+string(rune('a'+i%26)), props{"I": edm.NewInt32(int32(i))})})
		}
		env.mustWrite(ops...)
		counter.take()
		page, err := s.QueryEntities(env.ctx, env.account, env.table, store.Query{
			Keys: pkRange("f"), Top: 2, Match: func(e *model.Entity) bool { return e.Properties["I"].Int%10 == 9 },
		})
		if err != nil || len(page.Entities) != 2 || page.Next == nil {
			t.Fatalf("page = %d entities, %v, %v", len(page.Entities), page.Next, err)
		}
		if got := counter.take()["Query"]; got > 4 {
			t.Errorf("a 1-in-10 filter for 2 matches took %d Query calls", got)
		}
		if page.Next.RowKey != page.Entities[1].RowKey {
			t.Errorf("Next %+v; want the last match %q", page.Next, page.Entities[1].RowKey)
		}
	})
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: every call must fail fast with
	// ErrUnavailable, never hang.
	l := dynamolocal.NewClient("http://127.0.0.1:1", func(o *dynamodb.Options) { o.RetryMaxAttempts = 2 })
	s := &Store{db: l, opts: Options{RequestTimeout: 5 * time.Second}.withDefaults()}
	ctx := dynamolocal.Context(t, time.Minute)
	e := entityWith("p", "r", nil)
	calls := []struct {
		name string
		call func() error
	}{
		{"New", func() error { _, err := New(ctx, l, Options{}); return err }},
		{"CreateTable", func() error { _, err := s.CreateTable(ctx, "a", "t"); return err }},
		{"GetTable", func() error { _, err := s.GetTable(ctx, "a", "t"); return err }},
		{"GetEntity", func() error { _, err := s.GetEntity(ctx, "a", "t", "p", "r"); return err }},
		{"Write", func() error { return s.Write(ctx, "a", "t", []store.Op{{Kind: store.OpInsert, Entity: e}}) }},
		{"QueryEntities", func() error { _, err := s.QueryEntities(ctx, "a", "t", store.Query{Top: 1}); return err }},
		{"QueryTables", func() error { _, err := s.QueryTables(ctx, "a", store.TableQuery{Top: 1}); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // each waits out the SDK's retry backoff
			start := time.Now()
			err := c.call()
			if !errors.Is(err, store.ErrUnavailable) {
				t.Errorf("error %v; want ErrUnavailable", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
	t.Run("Deadline", func(t *testing.T) {
		env := newEnv(t, newTestStore(t))
		ctx, cancel := contextWithTimeout(env, time.Nanosecond)
		defer cancel()
		<-ctx.Done() // the deadline has passed
		if _, err := env.s.GetEntity(ctx, env.account, env.table, "p", "r"); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("GetEntity past the deadline = %v; want ErrUnavailable", err)
		}
	})
}
