package storetest

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// edgeValues are the values every store must return bit for bit: the limits
// of each Edm type and the doubles DynamoDB's numbers cannot hold.
func edgeValues(t *testing.T) []struct {
	name  string
	value edm.Value
} {
	dt := func(s string) edm.Value {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return edm.NewDateTime(tm)
	}
	return []struct {
		name  string
		value edm.Value
	}{
		{"StringEmpty", edm.NewString("")},
		{"StringASCII", edm.NewString("hello, world")},
		{"StringUnicode", edm.NewString("héllo wörld 中文 😀 𝄞 \uFFFD")},
		{"StringWhitespaceControls", edm.NewString("tab\there\nnewline\r\n")},
		{"StringQuotesAndMarkup", edm.NewString(`it's "quoted" <xml attr='x'>&amp;</xml> \ / # ? %`)},
		{"String32KChars", edm.NewString(strings.Repeat("abcdefgh", 4096))},
		{"String16KSurrogatePairs", edm.NewString(strings.Repeat("😀", 16384))},
		{"BinaryEmpty", edm.NewBinary([]byte{})},
		{"BinaryZeroByte", edm.NewBinary([]byte{0})},
		{"BinaryAllBytes", edm.NewBinary(allBytes())},
		{"Binary64KiB", edm.NewBinary(pattern(64<<10, 7))},
		{"BooleanTrue", edm.NewBoolean(true)},
		{"BooleanFalse", edm.NewBoolean(false)},
		{"Int32Zero", edm.NewInt32(0)},
		{"Int32MinusOne", edm.NewInt32(-1)},
		{"Int32Max", edm.NewInt32(math.MaxInt32)},
		{"Int32Min", edm.NewInt32(math.MinInt32)},
		{"Int64Zero", edm.NewInt64(0)},
		{"Int64Max", edm.NewInt64(math.MaxInt64)},
		{"Int64Min", edm.NewInt64(math.MinInt64)},
		{"Int64BeyondDouble", edm.NewInt64(1<<53 + 1)},
		{"DoubleZero", edm.NewDouble(0)},
		{"DoubleNegativeZero", edm.NewDouble(math.Copysign(0, -1))},
		{"DoubleNaN", edm.NewDouble(math.NaN())},
		{"DoublePositiveInfinity", edm.NewDouble(math.Inf(1))},
		{"DoubleNegativeInfinity", edm.NewDouble(math.Inf(-1))},
		{"DoubleSmallestDenormal", edm.NewDouble(5e-324)},
		{"DoubleSmallestNormal", edm.NewDouble(2.2250738585072014e-308)},
		{"DoubleMax", edm.NewDouble(1.7976931348623157e308)},
		{"DoubleMinusMax", edm.NewDouble(-1.7976931348623157e308)},
		{"DoubleIntegral", edm.NewDouble(3)},
		{"DoubleOneTenth", edm.NewDouble(0.1)},
		{"DoubleThirds", edm.NewDouble(1.0 / 3)},
		{"DateTimeMin", dt("1601-01-01T00:00:00Z")},
		{"DateTimeMax", dt("9999-12-31T23:59:59.9999999Z")},
		{"DateTimeUnixEpoch", dt("1970-01-01T00:00:00Z")},
		{"DateTimeBeforeEpochTicks", dt("1969-12-31T23:59:59.9999999Z")},
		{"DateTime100ns", dt("2024-02-29T12:34:56.1234567Z")},
		{"DateTimeOneTick", dt("2000-01-01T00:00:00.0000001Z")},
		{"GuidZero", edm.NewGuid("00000000-0000-0000-0000-000000000000")},
		{"Guid", edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833")},
		{"GuidMax", edm.NewGuid("ffffffff-ffff-ffff-ffff-ffffffffffff")},
	}
}

func allBytes() []byte {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

// testValues round-trips every edge value through Write, GetEntity and
// QueryEntities, alone and all in one entity.
func (s suite) testValues(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()
	values := edgeValues(t)
	all := props{}
	for _, v := range values {
		t.Run(v.name, func(t *testing.T) {
			e := newEntity("values", v.name, props{"V": v.value})
			f.insert(table, e)
			got := f.mustGet(table, "values", v.name)
			g, ok := got.Properties["V"]
			if !ok || !g.Equal(v.value) || g.Type != v.value.Type {
				t.Fatalf("GetEntity returned %s; want %s", describeValue(g), describeValue(v.value))
			}
			if v.value.Type == edm.Binary && g.Bin == nil {
				t.Errorf("Edm.Binary came back nil; want a present, empty value")
			}
		})
		all[v.name] = v.value
	}
	t.Run("AllInOneEntity", func(t *testing.T) {
		e := newEntity("all", "values", all)
		f.insert(table, e)
		f.wantStored(table, e)
		page, err := f.s.QueryEntities(f.ctx, f.account, table, store.Query{Keys: pkExact("all"), Match: pkIs("all"), Top: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 1 {
			t.Fatalf("query returned %d entities; want 1", len(page.Entities))
		}
		if diff := entityDiff(page.Entities[0], e); diff != "" {
			t.Errorf("QueryEntities: %s", diff)
		}
	})
	t.Run("Timestamp100ns", func(t *testing.T) {
		// Timestamps keep 100 ns precision too: the ETag shows 7 digits.
		e := newEntity("ts", "ticks", nil)
		e.Timestamp = time.Date(2031, 7, 8, 9, 10, 11, 999999900, time.UTC)
		f.insert(table, e)
		if got := f.mustGet(table, "ts", "ticks"); !got.Timestamp.Equal(e.Timestamp) || got.Timestamp.Location() != time.UTC {
			t.Errorf("Timestamp = %v (%v); want %v in UTC", got.Timestamp, got.Timestamp.Location(), e.Timestamp)
		}
	})
}

// unicodeKeys are legal PartitionKeys and RowKeys beyond ASCII letters:
// empty, punctuation that URLs and ETags quote, and characters outside the
// Basic Multilingual Plane.
var unicodeKeys = []string{
	"",
	"a",
	"it's",
	"a b",
	"%2F+&=;,:@$!*()[]{}|^`~'\"<>",
	"é",
	"Ω",
	"中文",
	"ﬀ",
	"\uFFFD",
	"😀",
	"😀x",
	"𝄞",
	"a\u0301",
	"\U0010FFFD",
	strings.Repeat("k", 255),
}

// testKeys stores entities under every combination of interesting keys and
// reads each back by its keys.
func (s suite) testKeys(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()
	var all []*model.Entity
	seen := map[[2]string]bool{}
	for i, pk := range unicodeKeys {
		for j, rk := range []string{"", unicodeKeys[(i+3)%len(unicodeKeys)], "😀" + pk} {
			if seen[[2]string{pk, rk}] {
				continue
			}
			seen[[2]string{pk, rk}] = true
			e := newEntity(pk, rk, props{"I": edm.NewInt32(int32(i)), "J": edm.NewInt32(int32(j))})
			f.insert(table, e)
			all = append(all, e)
		}
	}
	for _, e := range all {
		t.Run(fmt.Sprintf("%+q/%+q", short(e.PartitionKey), short(e.RowKey)), func(t *testing.T) {
			f.wantStored(table, e)
			q := store.Query{Keys: pkExact(e.PartitionKey), Match: pkIs(e.PartitionKey), Top: 1000}
			got := f.queryAll(table, q)
			var want []*model.Entity
			for _, o := range all {
				if o.PartitionKey == e.PartitionKey {
					want = append(want, o)
				}
			}
			sortEntities(want)
			f.wantEntities(got, want, false)
		})
	}
	t.Run("FullScanOrder", func(t *testing.T) {
		want := append([]*model.Entity(nil), all...)
		sortEntities(want)
		for _, top := range []int{1, 7, 1000} {
			f.wantEntities(f.queryAll(table, store.Query{Top: top}), want, f.opts.unorderedPartitions)
		}
	})
}

func short(s string) string {
	if len(s) > 12 {
		return s[:12] + "..."
	}
	return s
}

// testLargeEntity writes an entity just under 1 MiB and reads it back.
func (s suite) testLargeEntity(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()
	// By Azure's size formula: 15 binaries of 60 KiB (921,930 bytes with
	// overheads), a 32,000-character string (64,018) and a 50 KiB binary
	// (51,222) make about 1,037,200 bytes of the 1,048,576 allowed.
	p := props{"Str": edm.NewString(strings.Repeat("é", 32000))}
	for i := range 15 {
		p[fmt.Sprintf("Bin%02d", i)] = edm.NewBinary(pattern(60<<10, i+1))
	}
	p["Bin15"] = edm.NewBinary(pattern(50<<10, 99))
	e := newEntity("large", "one", p)
	f.insert(table, e)
	f.wantStored(table, e)

	got := f.queryAll(table, store.Query{Top: 1000})
	if len(got) != 1 {
		t.Fatalf("query returned %d entities; want 1", len(got))
	}
	if diff := entityDiff(got[0], e); diff != "" {
		t.Errorf("QueryEntities: %s", diff)
	}

	// Replacing it with another large entity is exact too.
	repl := newEntity("large", "one", props{"Bin": edm.NewBinary(pattern(64<<10, 5)), "Str": edm.NewString(strings.Repeat("x", 32767))})
	f.mustWrite(table, store.Op{Kind: store.OpReplace, Entity: repl, Cond: store.CondTimestamp, Timestamp: e.Timestamp})
	f.wantStored(table, repl)
}

// testCopies checks that entities handed in and out are not shared with the
// store.
func (s suite) testCopies(t *testing.T) {
	f := s.fixture(t)
	table := f.newTable()
	orig := newEntity("copy", "e", props{"Bin": edm.NewBinary([]byte("abc")), "S": edm.NewString("s")})
	want := orig.Clone()
	f.insert(table, orig)

	t.Run("InputChangedAfterWrite", func(t *testing.T) {
		orig.Properties["Bin"].Bin[0] = 'X'
		orig.Properties["S"] = edm.NewString("changed")
		orig.Properties["Added"] = edm.NewInt32(1)
		f.wantStored(table, want)
	})
	mutate := func(e *model.Entity) {
		e.Properties["Bin"].Bin[0] = 'Y'
		e.Properties["S"] = edm.NewString("mutated")
		delete(e.Properties, "Bin")
		e.Properties["New"] = edm.NewBoolean(true)
		e.RowKey = "other"
		e.Timestamp = time.Time{}
	}
	t.Run("GetResultChanged", func(t *testing.T) {
		mutate(f.mustGet(table, "copy", "e"))
		f.wantStored(table, want)
	})
	t.Run("QueryResultChanged", func(t *testing.T) {
		page, err := f.s.QueryEntities(f.ctx, f.account, table, store.Query{Top: 10})
		if err != nil || len(page.Entities) != 1 {
			t.Fatalf("query = %d entities, %v", len(page.Entities), err)
		}
		mutate(page.Entities[0])
		f.wantStored(table, want)
	})
}
