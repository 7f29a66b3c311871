package model

import (
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

func TestValidateTableName(t *testing.T) {
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
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é", 1}, {"日本", 2}, {"😀", 2}, {"a😀b", 4}, {"\xff", 1},
	}
	for _, tc := range tests {
		if got := utf16Len(tc.in); got != tc.want {
			t.Errorf("utf16Len(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}
