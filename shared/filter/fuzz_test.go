package filter

import (
	"errors"
	"testing"
)

// FuzzParse checks that Parse never panics, that its errors are *Error
// with a position inside the input, and that a parsed filter prints as
// OData text that parses back to the same tree, matching the same entities
// and giving the same key range.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"",
		"PartitionKey eq 'a' and RowKey ge 'b' and RowKey lt 'c'",
		"'a' lt PartitionKey or not (Age gt 30 and IsActive)",
		"A eq 'it''s' and B eq 42L and C eq -4.2E-3D and D eq NaN and E eq -INF",
		"T ge datetime'2024-01-01T00:00:00.123456789+05:30' and G eq guid'0F8FAD5B-D9CB-469F-A165-70867728950E'",
		"B eq X'0aff' or B eq binary'' or Größe eq 1",
		"(A eq 1)and(B eq 2)or not C",
		"A EQ 1",
		"startswith(A, 'x')",
		"A eq 1e400",
		"((((A eq 1))))",
		"A eq 'unterminated",
		"(true and RowKey eq '1') and ((false or PartitionKey eq 'p'))",
		"not true or 1 lt 2 and 'a' ne 'b'",
	} {
		f.Add(seed)
	}
	e := sampleEntity()
	f.Fuzz(func(t *testing.T, src string) {
		flt, err := Parse(src)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("Parse(%q) error %T, want *Error", src, err)
			}
			if fe.Pos < 0 || fe.Pos > len(src) {
				t.Fatalf("Parse(%q) error position %d outside [0,%d]", src, fe.Pos, len(src))
			}
			return
		}
		canonical := flt.String()
		again, err := Parse(flt.OData())
		if err != nil {
			t.Fatalf("Parse(%q) printed %q, which does not parse: %v", src, flt.OData(), err)
		}
		if got := again.String(); got != canonical {
			t.Fatalf("round trip of %q\n got %s\nwant %s", src, got, canonical)
		}
		if flt.Match(e) != again.Match(e) {
			t.Fatalf("%q and its reprint disagree on Match", src)
		}
		kr := flt.KeyRange()
		if formatRange(kr) != formatRange(again.KeyRange()) {
			t.Fatalf("%q and its reprint disagree on KeyRange", src)
		}
		if flt.Match(e) && !kr.Contains(e.PartitionKey, e.RowKey) {
			t.Fatalf("%q matches an entity outside %s", src, formatRange(kr))
		}
	})
}
