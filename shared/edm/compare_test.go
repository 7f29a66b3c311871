package edm

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)
	tests := []struct {
		name   string
		a, b   Value
		want   int
		wantOK bool
	}{
		{"string less", NewString("a"), NewString("b"), -1, true},
		{"string equal", NewString("abc"), NewString("abc"), 0, true},
		{"string prefix first", NewString("ab"), NewString("abc"), -1, true},
		{"string ordinal upper before lower", NewString("Z"), NewString("a"), -1, true},
		{"string empty first", NewString(""), NewString("a"), -1, true},
		{"string code point order", NewString("\uffff"), NewString("😀"), -1, true},
		{"guid order", NewGuid("00000000-0000-0000-0000-000000000001"), NewGuid("f0000000-0000-0000-0000-000000000000"), -1, true},
		{"guid equal", NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"), NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"), 0, true},
		{"binary bytewise", NewBinary([]byte{1, 2}), NewBinary([]byte{1, 3}), -1, true},
		{"binary prefix first", NewBinary([]byte{1}), NewBinary([]byte{1, 0}), -1, true},
		{"binary empty equals nil", NewBinary([]byte{}), NewBinary(nil), 0, true},
		{"bool false before true", NewBoolean(false), NewBoolean(true), -1, true},
		{"bool true after false", NewBoolean(true), NewBoolean(false), 1, true},
		{"bool equal", NewBoolean(true), NewBoolean(true), 0, true},
		{"int32 less", NewInt32(-5), NewInt32(3), -1, true},
		{"int32 extremes", NewInt32(math.MinInt32), NewInt32(math.MaxInt32), -1, true},
		{"int64 extremes", NewInt64(math.MaxInt64), NewInt64(math.MinInt64), 1, true},
		{"int64 equal", NewInt64(42), NewInt64(42), 0, true},
		{"double less", NewDouble(1.5), NewDouble(2.5), -1, true},
		{"double negative zero equals zero", NewDouble(math.Copysign(0, -1)), NewDouble(0), 0, true},
		{"double infinities", NewDouble(math.Inf(-1)), NewDouble(math.Inf(1)), -1, true},
		{"double smallest", NewDouble(0), NewDouble(5e-324), -1, true},
		{"double NaN left", NewDouble(math.NaN()), NewDouble(1), 0, false},
		{"double NaN right", NewDouble(1), NewDouble(math.NaN()), 0, false},
		{"double NaN both", NewDouble(math.NaN()), NewDouble(math.NaN()), 0, false},
		{"datetime earlier", NewDateTime(t0), NewDateTime(t0.Add(100 * time.Nanosecond)), -1, true},
		{"datetime same instant other zone", NewDateTime(t0), Value{Type: DateTime, Time: t0.In(time.FixedZone("x", 3600))}, 0, true},
		{"int64 property vs int32 literal", NewInt64(42), NewInt32(42), 0, false},
		{"int32 vs int64", NewInt32(42), NewInt64(42), 0, false},
		{"double vs int32", NewDouble(42), NewInt32(42), 0, false},
		{"string vs guid", NewString("c9da6455-213d-42c9-9a79-3e9149a57833"), NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"), 0, false},
		{"string vs int32", NewString("1"), NewInt32(1), 0, false},
		{"missing property", Value{}, NewString("a"), 0, false},
		{"both missing", Value{}, Value{}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Compare(tc.a, tc.b)
			if got != tc.want || ok != tc.wantOK {
				t.Fatalf("Compare = (%d, %v), want (%d, %v)", got, ok, tc.want, tc.wantOK)
			}
			if !ok {
				return
			}
			// Antisymmetry: swapping the operands flips the sign.
			rev, rok := Compare(tc.b, tc.a)
			if !rok || rev != -got {
				t.Fatalf("Compare(b, a) = (%d, %v), want (%d, true)", rev, rok, -got)
			}
		})
	}
}

func TestParseGuid(t *testing.T) {
	const canon = "c9da6455-213d-42c9-9a79-3e9149a57833"
	tests := []struct {
		name, in string
		want     string
		ok       bool
	}{
		{"D lower", canon, canon, true},
		{"D upper", "C9DA6455-213D-42C9-9A79-3E9149A57833", canon, true},
		{"N", "c9da6455213d42c99a793e9149a57833", canon, true},
		{"B", "{C9DA6455-213D-42C9-9A79-3E9149A57833}", canon, true},
		{"P", "(c9da6455-213d-42c9-9a79-3e9149a57833)", canon, true},
		{"zero", "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000", true},
		{"empty", "", "", false},
		{"too short", "c9da6455-213d-42c9-9a79-3e9149a5783", "", false},
		{"bad digit", "g9da6455-213d-42c9-9a79-3e9149a57833", "", false},
		{"dash misplaced", "c9da645-5213d-42c9-9a79-3e9149a57833", "", false},
		{"N with dash", "c9da6455213d42c99a793e9149a5783-", "", false},
		{"mismatched braces", "{c9da6455-213d-42c9-9a79-3e9149a57833)", "", false},
		{"38 without braces", "xc9da6455-213d-42c9-9a79-3e9149a57833x", "", false},
		{"spaces", " 9da6455-213d-42c9-9a79-3e9149a57833 ", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseGuid(tc.in)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("ParseGuid(%q) = (%q, %v), want (%q, %v)", tc.in, got, ok, tc.want, tc.ok)
			}
			gb, okb := appendGuid([]byte("x"), []byte(tc.in))
			if string(gb) != "x"+got || okb != ok {
				t.Fatalf("appendGuid bytes = (%q, %v), differs from string form", gb, okb)
			}
		})
	}
	t.Run("canonical input does not allocate", func(t *testing.T) {
		if n := testing.AllocsPerRun(100, func() { ParseGuid(canon) }); n != 0 {
			t.Fatalf("ParseGuid of a canonical Guid made %v allocations, want 0", n)
		}
	})
}

// TestParseGuidEveryByte puts every byte value at every position of the D,
// N, B and P forms and compares ParseGuid with a plain reading of the
// rules: hex digits of either case, dashes exactly at 8, 13, 18 and 23 of
// the D form, and nothing else.
func TestParseGuidEveryByte(t *testing.T) {
	t.Parallel()
	reference := func(s string) (string, bool) {
		if len(s) == 38 && (s[0] == '{' && s[37] == '}' || s[0] == '(' && s[37] == ')') {
			s = s[1:37]
		}
		var digits []byte
		switch len(s) {
		case 36:
			for i := 0; i < 36; i++ {
				if i == 8 || i == 13 || i == 18 || i == 23 {
					if s[i] != '-' {
						return "", false
					}
					continue
				}
				digits = append(digits, s[i])
			}
		case 32:
			digits = []byte(s)
		default:
			return "", false
		}
		for _, c := range digits {
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return "", false
			}
		}
		d := strings.ToLower(string(digits))
		return d[:8] + "-" + d[8:12] + "-" + d[12:16] + "-" + d[16:20] + "-" + d[20:], true
	}
	for _, form := range []string{
		"c9da6455-213d-42c9-9a79-3e9149a57833",
		"C9DA6455213D42C99A793E9149A57833",
		"{c9da6455-213d-42c9-9a79-3e9149a57833}",
		"(C9DA6455-213D-42C9-9A79-3E9149A57833)",
	} {
		for i := range len(form) {
			for c := range 256 {
				in := []byte(form)
				in[i] = byte(c)
				got, ok := ParseGuid(string(in))
				want, wantOK := reference(string(in))
				if got != want || ok != wantOK {
					t.Fatalf("ParseGuid(%q) = (%q, %v), want (%q, %v)", in, got, ok, want, wantOK)
				}
			}
		}
	}
}
