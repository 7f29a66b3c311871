package filter

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

func formatBounds(b model.Bounds) string {
	if b.Empty() {
		return "empty"
	}
	var s strings.Builder
	switch {
	case b.Lower == nil:
		s.WriteString("(-inf")
	case b.Lower.Inclusive:
		s.WriteString("[" + strconv.Quote(b.Lower.Value))
	default:
		s.WriteString("(" + strconv.Quote(b.Lower.Value))
	}
	s.WriteString(",")
	switch {
	case b.Upper == nil:
		s.WriteString("+inf)")
	case b.Upper.Inclusive:
		s.WriteString(strconv.Quote(b.Upper.Value) + "]")
	default:
		s.WriteString(strconv.Quote(b.Upper.Value) + ")")
	}
	return s.String()
}

func formatRange(r model.KeyRange) string {
	return "pk " + formatBounds(r.PartitionKey) + " rk " + formatBounds(r.RowKey)
}

const open = "(-inf,+inf)"

func TestKeyRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		filter string
		pk, rk string
	}{
		{"empty filter", "", open, open},
		{"true is open", "true", open, open},
		{"false is empty", "false", "empty", open},
		{"not false is open", "not false", open, open},
		{"not true is empty", "not true", "empty", open},
		{"true and a key", "true and PartitionKey eq 'a'", `["a","a"]`, open},
		{"false or a key", "false or PartitionKey eq 'a'", `["a","a"]`, open},
		{"true or a key", "true or PartitionKey eq 'a'", open, open},
		{"partition equality", "PartitionKey eq 'a'", `["a","a"]`, open},
		{"point query", "PartitionKey eq 'a' and RowKey eq 'b'", `["a","a"]`, `["b","b"]`},
		{"row range in a partition", "PartitionKey eq 'p' and RowKey ge 'x' and RowKey lt 'y'", `["p","p"]`, `["x","y")`},
		{"gt", "PartitionKey gt 'a'", `("a",+inf)`, open},
		{"ge", "PartitionKey ge 'a'", `["a",+inf)`, open},
		{"lt", "RowKey lt 'z'", open, `(-inf,"z")`},
		{"le", "RowKey le 'z'", open, `(-inf,"z"]`},
		{"flipped lt", "'a' lt PartitionKey", `("a",+inf)`, open},
		{"flipped ge", "'z' ge RowKey", open, `(-inf,"z"]`},
		{"flipped eq", "'a' eq PartitionKey", `["a","a"]`, open},
		{"intersection", "PartitionKey gt 'a' and PartitionKey le 'c' and PartitionKey lt 'd'", `("a","c"]`, open},
		{"lower bound tie keeps the exclusive one", "PartitionKey ge 'a' and PartitionKey gt 'a'", `("a",+inf)`, open},
		{"upper bound tie keeps the exclusive one", "PartitionKey le 'c' and PartitionKey lt 'c'", `(-inf,"c")`, open},
		{"contradiction", "PartitionKey eq 'a' and PartitionKey eq 'b'", "empty", open},
		{"touching exclusive bounds", "RowKey gt 'm' and RowKey lt 'm'", open, "empty"},
		{"nothing is below the empty string", "PartitionKey lt ''", "empty", open},
		{"everything is at least the empty string", "PartitionKey ge ''", `["",+inf)`, open},
		{"ne is open", "PartitionKey ne 'a'", open, open},
		{"non-key property", "Name eq 'x'", open, open},
		{"key against a non-string literal", "PartitionKey eq 1", open, open},
		{"other conditions do not widen an and", "PartitionKey eq 'a' and Age gt 3 and not IsActive", `["a","a"]`, open},

		// or takes the hull, skipping sides that cannot match.
		{"or of equalities", "PartitionKey eq 'a' or PartitionKey eq 'c'", `["a","c"]`, open},
		{"or of row ranges in one partition", "PartitionKey eq 'p' and (RowKey eq 'a' or RowKey eq 'b')", `["p","p"]`, `["a","b"]`},
		{"or of point queries", "(PartitionKey eq 'a' and RowKey eq '1') or (PartitionKey eq 'b' and RowKey eq '2')", `["a","b"]`, `["1","2"]`},
		{"or with an open side", "PartitionKey eq 'a' or Age gt 1", open, open},
		{"or with one bounded side", "PartitionKey ge 'a' or PartitionKey le 'c'", open, open},
		{"or with an empty side", "(PartitionKey eq 'a' and PartitionKey eq 'b') or PartitionKey eq 'c'", `["c","c"]`, open},
		{"or with an empty row side", "(PartitionKey eq 'a' and RowKey lt '') or PartitionKey eq 'c'", `["c","c"]`, open},
		{"or hull tie keeps the inclusive one", "PartitionKey ge 'a' or PartitionKey gt 'a'", `["a",+inf)`, open},
		{"or of two empty sides", "PartitionKey lt '' or RowKey lt ''", open, "empty"},

		// not is pushed inward, exactly for the keys.
		{"not lt", "not (PartitionKey lt 'b')", `["b",+inf)`, open},
		{"not le", "not PartitionKey le 'b'", `("b",+inf)`, open},
		{"not gt", "not (RowKey gt 'b')", open, `(-inf,"b"]`},
		{"not ge", "not (RowKey ge 'b')", open, `(-inf,"b")`},
		{"not eq is open", "not (PartitionKey eq 'a')", open, open},
		{"not ne is eq", "not (PartitionKey ne 'a')", `["a","a"]`, open},
		{"double not", "not not (PartitionKey eq 'a')", `["a","a"]`, open},
		{"not or is and", "not (PartitionKey lt 'a' or PartitionKey gt 'c')", `["a","c"]`, open},
		{"not and is or", "not (PartitionKey lt 'a' and Age eq 1)", open, open},
		{"not and of keys is a hull", "not (PartitionKey ne 'a' and PartitionKey ne 'c')", `["a","c"]`, open},
		{"not of a non-key comparison", "not (Age eq 1) and RowKey eq 'r'", open, `["r","r"]`},
		{"not of a non-string key comparison", "not (PartitionKey eq 1)", open, open},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			got := formatRange(f.KeyRange())
			if want := "pk " + tt.pk + " rk " + tt.rk; got != want {
				t.Errorf("KeyRange(%q)\n got %s\nwant %s", tt.filter, got, want)
			}
		})
	}
}

func TestKeyRangeExactAndFresh(t *testing.T) {
	t.Parallel()
	f, err := Parse("PartitionKey eq 'p' and RowKey gt 'r'")
	if err != nil {
		t.Fatal(err)
	}
	kr := f.KeyRange()
	if pk, ok := kr.PartitionKey.Exact(); !ok || pk != "p" {
		t.Errorf("PartitionKey.Exact() = %q, %v; want p, true", pk, ok)
	}
	if _, ok := kr.RowKey.Exact(); ok {
		t.Error("RowKey.Exact() is true for a gt bound")
	}
	// The caller owns what it gets.
	kr.PartitionKey.Lower.Value = "changed"
	kr.RowKey.Lower.Inclusive = true
	if got, want := formatRange(f.KeyRange()), `pk ["p","p"] rk ("r",+inf)`; got != want {
		t.Errorf("after changing a returned range, KeyRange() = %s, want %s", got, want)
	}
}

// keyAlphabet mixes ASCII, the empty key, and characters whose UTF-8 byte
// order differs from their UTF-16 order (U+FFFF against U+10000), so a
// disagreement between Match's ordering and model.Bounds' would show.
var keyAlphabet = []string{"", "a", "ab", "b", "ba", "bb", "c", "é", "\uffff", "𐀀", "a'b", "A"}

// randomFilter writes a random filter over the keys and two ordinary
// properties, with at most 2^depth comparisons.
func randomFilter(r *rand.Rand, depth int) string {
	if depth == 0 || r.IntN(3) == 0 {
		return randomComparison(r)
	}
	switch r.IntN(4) {
	case 0:
		return "not (" + randomFilter(r, depth-1) + ")"
	case 1:
		return "(" + randomFilter(r, depth-1) + ") or (" + randomFilter(r, depth-1) + ")"
	default:
		return "(" + randomFilter(r, depth-1) + ") and (" + randomFilter(r, depth-1) + ")"
	}
}

func randomComparison(r *rand.Rand) string {
	props := []string{"PartitionKey", "PartitionKey", "RowKey", "RowKey", "Age", "Name"}
	prop := props[r.IntN(len(props))]
	op := opNames[1+r.IntN(len(opNames)-1)]
	var lit string
	switch {
	case prop == "Age" || r.IntN(8) == 0: // sometimes a key against a number
		lit = strconv.Itoa(r.IntN(5))
	default:
		var b strings.Builder
		formatLiteral(&b, edm.NewString(keyAlphabet[r.IntN(len(keyAlphabet))]))
		lit = b.String()
	}
	if r.IntN(2) == 0 {
		return lit + " " + op + " " + prop
	}
	return prop + " " + op + " " + lit
}

func randomEntity(r *rand.Rand) *model.Entity {
	key := func() string {
		k := keyAlphabet[r.IntN(len(keyAlphabet))]
		if r.IntN(3) == 0 {
			k += keyAlphabet[r.IntN(len(keyAlphabet))]
		}
		return k
	}
	e := &model.Entity{PartitionKey: key(), RowKey: key(), Properties: map[string]edm.Value{}}
	if r.IntN(4) != 0 {
		e.Properties["Age"] = edm.NewInt32(int32(r.IntN(5)))
	}
	if r.IntN(4) != 0 {
		e.Properties["Name"] = edm.NewString(key())
	}
	return e
}

// TestKeyRangeSound checks the property the stores rely on: no entity
// outside KeyRange ever matches.
func TestKeyRangeSound(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	entities := make([]*model.Entity, 200)
	for i := range entities {
		entities[i] = randomEntity(r)
	}
	matches, bounded := 0, 0
	for range 3000 {
		src := randomFilter(r, 3)
		f, err := Parse(src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", src, err)
		}
		kr := f.KeyRange()
		if formatRange(kr) != "pk "+open+" rk "+open {
			bounded++
		}
		for _, e := range entities {
			if !f.Match(e) {
				continue
			}
			matches++
			if !kr.Contains(e.PartitionKey, e.RowKey) {
				t.Fatalf("filter %s\nmatches PartitionKey %q RowKey %q\noutside %s", src, e.PartitionKey, e.RowKey, formatRange(kr))
			}
		}
	}
	// Guard against a generator that tests nothing.
	if matches < 10000 || bounded < 500 {
		t.Errorf("weak test: %d matches, %d bounded ranges", matches, bounded)
	}
	t.Logf("%d matches, %d bounded ranges", matches, bounded)
}
