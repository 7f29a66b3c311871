package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Option adjusts the suite to a store's documented deviations.
type Option func(*options)

type options struct {
	unorderedPartitions bool
}

// PartitionsUnordered tells the suite that queries which span several
// partitions return them in no particular order (the DynamoDB store Scans
// a table an earlier release created without the order index, which walks
// partitions by hash). Entities of one
// partition must still come together, in RowKey order, and paging must
// still return each entity exactly once. Without it the suite asserts
// (PartitionKey, RowKey) order for every query shape.
func PartitionsUnordered() Option {
	return func(o *options) { o.unorderedPartitions = true }
}

// Run runs the conformance suite. newStore returns a fresh or shared store;
// Run closes it when the subtest that asked for it ends. Its groups of
// subtests run in parallel, so newStore must be safe to call concurrently.
func Run(t *testing.T, newStore func(t *testing.T) store.Store, opts ...Option) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	s := suite{newStore: newStore, opts: o}
	groups := []struct {
		name string
		run  func(*testing.T)
	}{
		{"Tables", s.testTables},
		{"ServiceProperties", s.testServiceProperties},
		{"AccountIsolation", s.testAccountIsolation},
		{"TableNotFound", s.testTableNotFound},
		{"Conditions", s.testConditions},
		{"WriteSemantics", s.testWriteSemantics},
		{"Atomicity", s.testAtomicity},
		{"MergeLimits", s.testMergeLimits},
		{"Values", s.testValues},
		{"Keys", s.testKeys},
		{"LargeEntity", s.testLargeEntity},
		{"Copies", s.testCopies},
		{"Query", s.testQuery},
		{"CursorLimits", s.testCursorLimits},
		{"Concurrency", s.testConcurrency},
	}
	for _, g := range groups {
		// The groups run in parallel: each has a store of its own from
		// newStore and accounts named after its own test name.
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			g.run(t)
		})
	}
}

type suite struct {
	newStore func(t *testing.T) store.Store
	opts     options
}

// testTimeout bounds every subtest group; generous for DynamoDB Local.
const testTimeout = 3 * time.Minute

// fixture is one store, one account and a context for a group of subtests.
type fixture struct {
	t       *testing.T
	s       store.Store
	ctx     context.Context
	account string
	opts    options
	tables  int
}

func (s suite) fixture(t *testing.T) *fixture {
	t.Helper()
	st := s.newStore(t)
	if st == nil {
		t.Fatal("newStore returned nil")
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return &fixture{t: t, s: st, ctx: ctx, account: accountName(t.Name(), 0), opts: s.opts}
}

// runNonce keeps names unique across runs against a persistent backend.
var runNonce = func() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}()

func nameHash(parts ...string) string {
	h := fnv.New64a()
	h.Write([]byte(runNonce))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// accountName is a valid-looking storage account name (3 to 24 lower-case
// letters and digits), unique per test name and n.
func accountName(testName string, n int) string {
	return "acct" + nameHash(testName, fmt.Sprint("account", n))
}

// tableName derives a legal table name (^[A-Za-z][A-Za-z0-9]{2,62}$) from the
// test name, unique per test name, run and n, keeping some of its words.
func tableName(testName string, n int) string {
	var b strings.Builder
	for _, r := range testName {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	words := b.String()
	if len(words) > 30 {
		words = words[len(words)-30:]
	}
	return "T" + words + nameHash(testName, fmt.Sprint("table", n))
}

// newTable creates a table with a unique name.
func (f *fixture) newTable() string {
	f.t.Helper()
	f.tables++
	name := tableName(f.t.Name(), f.tables)
	f.createTable(f.account, name)
	return name
}

// createTable creates a table, waiting out ErrTableBeingDeleted (a store may
// still be dropping a table of that name).
func (f *fixture) createTable(account, name string) store.TableInfo {
	f.t.Helper()
	for {
		info, err := f.s.CreateTable(f.ctx, account, name)
		if errors.Is(err, store.ErrTableBeingDeleted) && f.ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			f.t.Fatalf("CreateTable(%q, %q): %v", account, name, err)
		}
		return info
	}
}

// Timestamps: unique, increasing, 100 ns aligned UTC times, as the service
// assigns them. A fixed base keeps failures reproducible.
var (
	timestampBase = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	timestampSeq  atomic.Int64
)

func nextTimestamp() time.Time {
	return timestampBase.Add(time.Duration(timestampSeq.Add(1)) * 100 * time.Nanosecond)
}

// props is shorthand for a property map.
type props = map[string]edm.Value

// newEntity returns an entity with a fresh Timestamp.
func newEntity(pk, rk string, p props) *model.Entity {
	if p == nil {
		p = props{}
	}
	return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: nextTimestamp(), Properties: p}
}

func (f *fixture) write(table string, ops ...store.Op) error {
	return f.s.Write(f.ctx, f.account, table, ops)
}

func (f *fixture) mustWrite(table string, ops ...store.Op) {
	f.t.Helper()
	if err := f.write(table, ops...); err != nil {
		f.t.Fatalf("Write(%s): %v", describeOps(ops), err)
	}
}

// insert inserts each entity, one Write per entity.
func (f *fixture) insert(table string, entities ...*model.Entity) {
	f.t.Helper()
	for _, e := range entities {
		f.mustWrite(table, store.Op{Kind: store.OpInsert, Entity: e})
	}
}

func (f *fixture) get(table, pk, rk string) (*model.Entity, error) {
	return f.s.GetEntity(f.ctx, f.account, table, pk, rk)
}

func (f *fixture) mustGet(table, pk, rk string) *model.Entity {
	f.t.Helper()
	e, err := f.get(table, pk, rk)
	if err != nil {
		f.t.Fatalf("GetEntity(%q, %q): %v", pk, rk, err)
	}
	return e
}

// wantAbsent asserts that the entity does not exist.
func (f *fixture) wantAbsent(table, pk, rk string) {
	f.t.Helper()
	e, err := f.get(table, pk, rk)
	if !errors.Is(err, store.ErrEntityNotFound) {
		f.t.Fatalf("GetEntity(%q, %q) = %v, %v; want ErrEntityNotFound", pk, rk, e, err)
	}
}

// wantStored asserts that the store holds exactly want.
func (f *fixture) wantStored(table string, want *model.Entity) {
	f.t.Helper()
	got := f.mustGet(table, want.PartitionKey, want.RowKey)
	if diff := entityDiff(got, want); diff != "" {
		f.t.Fatalf("stored entity (%q, %q) differs: %s", want.PartitionKey, want.RowKey, diff)
	}
}

// wantOpError asserts that err is an *store.OpError at index wrapping want.
func wantOpError(t *testing.T, err error, index int, want error) {
	t.Helper()
	var opErr *store.OpError
	if !errors.As(err, &opErr) {
		t.Fatalf("error = %v; want *store.OpError at %d wrapping %v", err, index, want)
	}
	if opErr.Index != index {
		t.Errorf("OpError.Index = %d; want %d (%v)", opErr.Index, index, err)
	}
	if !errors.Is(err, want) {
		t.Errorf("error = %v; want it to wrap %v", err, want)
	}
}

// entityDiff describes how got differs from want, or returns "".
func entityDiff(got, want *model.Entity) string {
	if got == nil || want == nil {
		if got == want {
			return ""
		}
		return fmt.Sprintf("got %v, want %v", got, want)
	}
	var diffs []string
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey {
		diffs = append(diffs, fmt.Sprintf("keys (%q, %q), want (%q, %q)", got.PartitionKey, got.RowKey, want.PartitionKey, want.RowKey))
	}
	if !got.Timestamp.Equal(want.Timestamp) {
		diffs = append(diffs, fmt.Sprintf("Timestamp %s, want %s", got.Timestamp.Format(time.RFC3339Nano), want.Timestamp.Format(time.RFC3339Nano)))
	}
	for _, name := range slices.Sorted(maps.Keys(want.Properties)) {
		w := want.Properties[name]
		g, ok := got.Properties[name]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("property %q missing", name))
		case !g.Equal(w):
			diffs = append(diffs, fmt.Sprintf("property %q = %s, want %s", name, describeValue(g), describeValue(w)))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got.Properties)) {
		if _, ok := want.Properties[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("unexpected property %q = %s", name, describeValue(got.Properties[name])))
		}
	}
	return strings.Join(diffs, "; ")
}

func describeValue(v edm.Value) string {
	switch v.Type {
	case edm.String, edm.Guid:
		if len(v.Str) > 40 {
			return fmt.Sprintf("%s(%d bytes %q...)", v.Type, len(v.Str), v.Str[:40])
		}
		return fmt.Sprintf("%s(%q)", v.Type, v.Str)
	case edm.Binary:
		return fmt.Sprintf("%s(%d bytes, nil=%t)", v.Type, len(v.Bin), v.Bin == nil)
	case edm.Boolean:
		return fmt.Sprintf("%s(%t)", v.Type, v.Bool)
	case edm.Int32, edm.Int64:
		return fmt.Sprintf("%s(%d)", v.Type, v.Int)
	case edm.Double:
		return fmt.Sprintf("%s(%g)", v.Type, v.Float)
	case edm.DateTime:
		return fmt.Sprintf("%s(%s)", v.Type, v.Time.Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s(%+v)", v.Type, v)
}

func describeOps(ops []store.Op) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%s(%q,%q)", op.Kind, op.Entity.PartitionKey, op.Entity.RowKey)
	}
	return strings.Join(parts, ", ")
}

// keyOf names an entity in messages and sets.
func keyOf(e *model.Entity) [2]string { return [2]string{e.PartitionKey, e.RowKey} }

// sortEntities sorts by PartitionKey, then RowKey, ordinally.
func sortEntities(es []*model.Entity) {
	sort.Slice(es, func(i, j int) bool { return keyLess(es[i], es[j]) })
}

func keyLess(a, b *model.Entity) bool {
	if a.PartitionKey != b.PartitionKey {
		return a.PartitionKey < b.PartitionKey
	}
	return a.RowKey < b.RowKey
}
