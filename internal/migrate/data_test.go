package migrate_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

const account = "devstoreaccount1"

// edgeEntities are one partition's worth of every Edm type at its edges,
// Unicode and empty keys, and one entity near the 1 MiB limit.
func edgeEntities(t testing.TB) []*model.Entity {
	t.Helper()
	minDT, _ := edm.ParseDateTime("1601-01-01T00:00:00.0000000Z")
	maxDT, _ := edm.ParseDateTime("9999-12-31T23:59:59.9999999Z")
	tick, _ := edm.ParseDateTime("2024-02-29T12:34:56.1234567Z")
	all := map[string]edm.Value{
		"Int32Min":    edm.NewInt32(math.MinInt32),
		"Int32Max":    edm.NewInt32(math.MaxInt32),
		"Int32Zero":   edm.NewInt32(0),
		"Int64Min":    edm.NewInt64(math.MinInt64),
		"Int64Max":    edm.NewInt64(math.MaxInt64),
		"Int64Small":  edm.NewInt64(1),
		"DoubleNaN":   edm.NewDouble(math.NaN()),
		"DoublePInf":  edm.NewDouble(math.Inf(1)),
		"DoubleNInf":  edm.NewDouble(math.Inf(-1)),
		"DoubleNZero": edm.NewDouble(math.Copysign(0, -1)),
		"DoubleZero":  edm.NewDouble(0),
		"DoubleOne":   edm.NewDouble(1),
		"DoubleTiny":  edm.NewDouble(5e-324),
		"DoubleMax":   edm.NewDouble(math.MaxFloat64),
		"DoubleBig":   edm.NewDouble(1e21),
		"DoubleInt32": edm.NewDouble(2147483647),
		"DoubleFrac":  edm.NewDouble(0.1),
		"DateMin":     edm.NewDateTime(minDT),
		"DateMax":     edm.NewDateTime(maxDT),
		"DateTick":    edm.NewDateTime(tick),
		"Guid":        edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"),
		"Binary":      edm.NewBinary([]byte{0, 1, 2, 0xfe, 0xff}),
		"True":        edm.NewBoolean(true),
		"False":       edm.NewBoolean(false),
		"Str":         edm.NewString("plain"),
		"StrEmpty":    edm.NewString(""),
		"StrUnicode":  edm.NewString("Grüße, 世界, שלום, 😀, e\u0301, \uffff, \U0010FFFD"),
		"StrEscapes":  edm.NewString("quote\" back\\ slash/ nl\n tab\t ctl\u0001 del\u007f <&>"),
		"StrLooksInt": edm.NewString("42"),
		"StrLong":     edm.NewString(strings.Repeat("x", model.MaxStringLength)),
	}
	keys := []struct{ pk, rk string }{
		{"", ""},
		{"", "row"},
		{"it's", "quote'd ''twice''"},
		{"Ünïcödé 世界", "😀 emoji"},
		{"spaces and %25 + & = ;", "\uE000 private"},
		{"\U0001F600", "\uFFFD"},
	}
	var out []*model.Entity
	for _, k := range keys {
		e := &model.Entity{PartitionKey: k.pk, RowKey: k.rk, Properties: map[string]edm.Value{}}
		for n, v := range all {
			e.Properties[n] = v
		}
		out = append(out, e)
	}
	// Near 1 MiB: fifteen 64 KiB binaries and a long string.
	big := &model.Entity{PartitionKey: "big", RowKey: "1", Properties: map[string]edm.Value{}}
	for i := range 15 {
		b := bytes.Repeat([]byte{byte(i)}, model.MaxBinaryLength)
		big.Properties[fmt.Sprintf("Blob%02d", i)] = edm.NewBinary(b)
	}
	big.Properties["Tail"] = edm.NewString(strings.Repeat("é", 20000))
	if size := model.EntitySize(big); size > model.MaxEntitySize || size < model.MaxEntitySize-64<<10 {
		t.Fatalf("big entity is %d bytes, want just under %d", size, model.MaxEntitySize)
	}
	// A second one in the same partition, so a transaction must split by
	// size.
	big2 := big.Clone()
	big2.RowKey = "2"
	out = append(out, big, big2)
	for _, e := range out {
		if err := model.ValidateEntity(e); err != nil {
			t.Fatalf("edge entity (%q, %q) is invalid: %v", e.PartitionKey, e.RowKey, err)
		}
	}
	return out
}

// bulkEntities makes n entities over partitions partitions, each with a few
// typed properties derived from its index.
func bulkEntities(n, partitions int) []*model.Entity {
	out := make([]*model.Entity, n)
	for i := range n {
		out[i] = &model.Entity{
			PartitionKey: fmt.Sprintf("p%04d", i%partitions),
			RowKey:       fmt.Sprintf("r%07d", i),
			Properties: map[string]edm.Value{
				"Index":   edm.NewInt32(int32(i)),
				"Big":     edm.NewInt64(int64(i) << 33),
				"Ratio":   edm.NewDouble(float64(i) / 7),
				"Whole":   edm.NewDouble(float64(i)),
				"Name":    edm.NewString(fmt.Sprintf("entity number %d", i)),
				"Even":    edm.NewBoolean(i%2 == 0),
				"Created": edm.NewDateTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * 1234567 * 100)),
			},
		}
	}
	return out
}

// seed creates table in st and inserts entities, 100 per partition per
// write, with a fixed Timestamp.
func seed(t testing.TB, st store.Store, table string, entities []*model.Entity) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.CreateTable(ctx, account, table); err != nil {
		t.Fatalf("create %s: %v", table, err)
	}
	byPK := map[string][]store.Op{}
	var order []string
	ts := time.Date(2023, 5, 6, 7, 8, 9, 100, time.UTC)
	for _, e := range entities {
		c := e.Clone()
		c.Timestamp = ts
		if _, ok := byPK[c.PartitionKey]; !ok {
			order = append(order, c.PartitionKey)
		}
		byPK[c.PartitionKey] = append(byPK[c.PartitionKey], store.Op{Kind: store.OpInsert, Entity: c})
	}
	// Concurrent writes, so the store's group commit shares the syncs.
	var (
		wg   sync.WaitGroup
		sem  = make(chan struct{}, 32)
		mu   sync.Mutex
		errs []error
	)
	for _, pk := range order {
		ops := byPK[pk]
		for len(ops) > 0 {
			n := min(len(ops), 100)
			batch := ops[:n]
			ops = ops[n:]
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if err := st.Write(ctx, account, table, batch); err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("seed %s partition %q: %w", table, pk, err))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
}

// readAll returns every entity of a table in a store, keyed "pk\x00rk".
func readAll(t testing.TB, st store.Store, table string) map[string]*model.Entity {
	t.Helper()
	out := map[string]*model.Entity{}
	q := store.Query{Top: 1000}
	for {
		page, err := st.QueryEntities(context.Background(), account, table, q)
		if err != nil {
			t.Fatalf("read %s: %v", table, err)
		}
		for _, e := range page.Entities {
			k := e.PartitionKey + "\x00" + e.RowKey
			if _, dup := out[k]; dup {
				t.Fatalf("read %s: entity (%q, %q) twice", table, e.PartitionKey, e.RowKey)
			}
			out[k] = e
		}
		if page.Next == nil {
			return out
		}
		q.After = page.Next
	}
}

// assertSameEntities fails unless got holds exactly want's entities with
// bit-identical properties (Timestamps aside).
func assertSameEntities(t testing.TB, table string, want []*model.Entity, got map[string]*model.Entity) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d entities, want %d", table, len(got), len(want))
	}
	var bad []string
	for _, w := range want {
		g, ok := got[w.PartitionKey+"\x00"+w.RowKey]
		if !ok {
			bad = append(bad, fmt.Sprintf("missing (%q, %q)", w.PartitionKey, w.RowKey))
			continue
		}
		if diff := propertyDiff(w, g); diff != "" {
			bad = append(bad, fmt.Sprintf("(%q, %q): %s", w.PartitionKey, w.RowKey, diff))
		}
	}
	sort.Strings(bad)
	if len(bad) > 5 {
		bad = append(bad[:5], fmt.Sprintf("... and %d more", len(bad)-5))
	}
	for _, b := range bad {
		t.Errorf("%s: %s", table, b)
	}
}

func propertyDiff(want, got *model.Entity) string {
	var diffs []string
	for n, wv := range want.Properties {
		gv, ok := got.Properties[n]
		if !ok {
			diffs = append(diffs, n+" missing")
			continue
		}
		if !wv.Equal(gv) {
			diffs = append(diffs, fmt.Sprintf("%s = %s %s, want %s %s", n, gv.Type, short(gv), wv.Type, short(wv)))
		}
	}
	for n := range got.Properties {
		if _, ok := want.Properties[n]; !ok {
			diffs = append(diffs, n+" extra")
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

func short(v edm.Value) string {
	s := string(edm.AppendValue(nil, v))
	if v.Type == edm.Double {
		s += fmt.Sprintf(" (bits %016x)", math.Float64bits(v.Float))
	}
	if len(s) > 60 {
		s = s[:60] + "..."
	}
	return s
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
