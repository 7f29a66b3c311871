package model

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

func TestValidateTableName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		code     apierr.Code
	}{
		{"simple", "Customers", ""},
		{"lower", "mytable", ""},
		{"digits after first", "t2024x", ""},
		{"shortest", "abc", ""},
		{"longest", "a" + strings.Repeat("b", 62), ""},
		{"too short", "ab", apierr.InvalidResourceName},
		{"too long", "a" + strings.Repeat("b", 63), apierr.InvalidResourceName},
		{"empty", "", apierr.InvalidResourceName},
		{"leading digit", "1table", apierr.InvalidResourceName},
		{"underscore", "my_table", apierr.InvalidResourceName},
		{"dash", "my-table", apierr.InvalidResourceName},
		{"space", "my table", apierr.InvalidResourceName},
		{"dollar system table", "$MetricsTransactionsTable", apierr.InvalidResourceName},
		{"non-ASCII letter", "tablé", apierr.InvalidResourceName},
		{"reserved", "tables", apierr.InvalidResourceName},
		{"reserved any case", "TaBlEs", apierr.InvalidResourceName},
		{"reserved as prefix is fine", "tablesx", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, ValidateTableName(tc.in), tc.code)
		})
	}
}

func TestValidatePropertyName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		code     apierr.Code
	}{
		{"ASCII", "Age", ""},
		{"underscore start", "_private", ""},
		{"only underscore", "_", ""},
		{"digits after first", "a123", ""},
		{"system name passes here", "Timestamp", ""},
		{"accented letters", "Prénom", ""},
		{"CJK", "名前", ""},
		{"Greek", "Ωμέγα", ""},
		{"letter number start (Nl)", "\u216Bfoo", ""},
		{"supplementary letter", "\U0001D49C", ""},
		{"combining mark after letter (Mn)", "e\u0301", ""},
		{"spacing mark after letter (Mc)", "\u0915\u093E", ""},
		{"non-ASCII digit after letter (Nd)", "a\u0663", ""},
		{"connecting punctuation after letter (Pc)", "a\u203Fb", ""},
		{"format character after letter (Cf)", "a\u200Db", ""},
		{"longest", strings.Repeat("a", 255), ""},
		{"longest in supplementary letters", strings.Repeat("\U0001D49C", 127) + "a", ""},
		{"too long", strings.Repeat("a", 256), apierr.PropertyNameTooLong},
		{"too long counted in UTF-16", strings.Repeat("\U0001D49C", 128), apierr.PropertyNameTooLong},
		{"255 digits is invalid, not too long", strings.Repeat("7", 255), apierr.PropertyNameInvalid},
		{"empty", "", apierr.PropertyNameInvalid},
		{"leading digit", "1a", apierr.PropertyNameInvalid},
		{"dash", "first-name", apierr.PropertyNameInvalid},
		{"dot", "odata.type", apierr.PropertyNameInvalid},
		{"at sign", "a@odata.type", apierr.PropertyNameInvalid},
		{"space", "first name", apierr.PropertyNameInvalid},
		{"dollar", "$a", apierr.PropertyNameInvalid},
		{"tab", "a\tb", apierr.PropertyNameInvalid},
		{"C1 control", "a\u0081", apierr.PropertyNameInvalid},
		{"combining mark first", "\u0301e", apierr.PropertyNameInvalid},
		{"non-ASCII digit first", "\u0663a", apierr.PropertyNameInvalid},
		{"connecting punctuation first", "\u203Fa", apierr.PropertyNameInvalid},
		{"format character first", "\u200Da", apierr.PropertyNameInvalid},
		{"private use", "a\uE000", apierr.PropertyNameInvalid},
		{"noncharacter", "a\uFFFF", apierr.PropertyNameInvalid},
		{"replacement character", "a\uFFFD", apierr.PropertyNameInvalid},
		{"invalid UTF-8", "a\xff", apierr.PropertyNameInvalid},
		{"emoji", "a😀", apierr.PropertyNameInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, ValidatePropertyName(tc.in), tc.code)
		})
	}
}

func TestUTF16Len(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é", 1}, {"日本", 2}, {"😀", 2}, {"a😀b", 4}, {"\xff", 1},
		// Eight bytes are tested at a time: non-ASCII in the first word,
		// the second word and the tail.
		{"abcdefgh", 8}, {"abcdefghi", 9}, {"abcdefg😀", 9}, {"abcdefgh😀", 10},
		{"abcdefghijklmnop", 16}, {"abcdefghijklmnopé", 17}, {"é" + strings.Repeat("a", 20), 21},
	}
	for _, tc := range tests {
		if got := utf16Len(tc.in); got != tc.want {
			t.Errorf("utf16Len(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestASCIINameTable checks the byte table of the ASCII fast path against
// the rune rules it stands for: every one- and two-byte ASCII name gets the
// same answer from isASCIIIdentifier as from isIdentifier, and
// validatePropertyName returns the UTF-16 length of every name it accepts.
func TestASCIINameTable(t *testing.T) {
	t.Parallel()
	for a := 0; a < utf8.RuneSelf; a++ {
		one := string(rune(a))
		if got, want := isASCIIIdentifier(one), isIdentifier(one); got != want {
			t.Errorf("%q: isASCIIIdentifier = %v, isIdentifier = %v", one, got, want)
		}
		for b := 0; b < utf8.RuneSelf; b++ {
			two := one + string(rune(b))
			if got, want := isASCIIIdentifier(two), isIdentifier(two); got != want {
				t.Errorf("%q: isASCIIIdentifier = %v, isIdentifier = %v", two, got, want)
			}
		}
	}
	for _, name := range []string{"a", "Age", strings.Repeat("a", 255), "Prénom", "\U0001D49C", strings.Repeat("\U0001D49C", 127) + "a"} {
		n, err := validatePropertyName(name)
		if err != nil || n != utf16Len(name) {
			t.Errorf("validatePropertyName(%q) = %d, %v, want %d, nil", name, n, err, utf16Len(name))
		}
	}
}
