package filter

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

func TestParseCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string
	}{
		// Structure and precedence.
		{"equality", "PartitionKey eq 'a'", "(eq PartitionKey 'a')"},
		{"every operator", "A eq 1 and B ne 1 and C gt 1 and D ge 1 and E lt 1 and F le 1",
			"(and (and (and (and (and (eq A 1) (ne B 1)) (gt C 1)) (ge D 1)) (lt E 1)) (le F 1))"},
		{"and binds tighter than or", "A eq 1 or B eq 2 and C eq 3", "(or (eq A 1) (and (eq B 2) (eq C 3)))"},
		{"and binds tighter than or on the left", "A eq 1 and B eq 2 or C eq 3", "(or (and (eq A 1) (eq B 2)) (eq C 3))"},
		{"or is left-associative", "A eq 1 or B eq 2 or C eq 3", "(or (or (eq A 1) (eq B 2)) (eq C 3))"},
		{"not applies to the comparison", "not A eq 1", "(not (eq A 1))"},
		{"not binds tighter than and", "not A eq 1 and B eq 2", "(and (not (eq A 1)) (eq B 2))"},
		{"double not", "not not A eq 1", "(not (not (eq A 1)))"},
		{"not of a group", "not (A eq 1 or B eq 2)", "(not (or (eq A 1) (eq B 2)))"},
		{"parentheses override precedence", "(A eq 1 or B eq 2) and C eq 3", "(and (or (eq A 1) (eq B 2)) (eq C 3))"},
		{"redundant parentheses vanish", "((A eq 1))", "(eq A 1)"},

		// OData v3: a Boolean literal is a Boolean expression, and a
		// comparison of two literals has a value ("Querying tables and
		// entities"; the .NET LINQ provider writes "(true and ...)").
		{"true alone", "true", "(true)"},
		{"false alone", "false", "(false)"},
		{"not true", "not true", "(not (true))"},
		{"true in parentheses", "(true)", "(true)"},
		{"LINQ form", "(true and RowKey eq '1') and ((false or PartitionKey eq 'p'))",
			"(and (and (true) (eq RowKey '1')) (or (false) (eq PartitionKey 'p')))"},
		{"literals equal", "1 eq 1", "(true)"},
		{"literals differ", "'a' eq 'b'", "(false)"},
		{"literals ordered", "'a' lt 'b'", "(true)"},
		{"booleans compared", "true ne false", "(true)"},
		{"NaN compares false", "NaN eq NaN", "(false)"},
		{"parenthesised comparisons as documented", "(PartitionKey eq 'Partition1') and (RowKey eq '00001')",
			"(and (eq PartitionKey 'Partition1') (eq RowKey '00001'))"},
		{"bare boolean property", "IsActive", "(eq IsActive true)"},
		{"not bare boolean property", "not IsActive", "(not (eq IsActive true))"},
		{"bare boolean inside and", "IsActive and Age gt 3", "(and (eq IsActive true) (gt Age 3))"},
		{"exactly 15 comparisons", strings.Repeat("A eq 1 and ", 14) + "A eq 1",
			strings.Repeat("(and ", 14) + "(eq A 1)" + strings.Repeat(" (eq A 1))", 14)},

		// Flipped operands: the property always ends up on the left.
		{"flipped lt", "'a' lt PartitionKey", "(gt PartitionKey 'a')"},
		{"flipped le", "'a' le RowKey", "(ge RowKey 'a')"},
		{"flipped gt", "5 gt Age", "(lt Age 5)"},
		{"flipped ge", "5 ge Age", "(le Age 5)"},
		{"flipped eq", "'x' eq Name", "(eq Name 'x')"},
		{"flipped ne", "1 ne A", "(ne A 1)"},

		// Whitespace.
		{"no space around parentheses", "(A eq 1)and(B eq 2)", "(and (eq A 1) (eq B 2))"},
		{"no space before a string", "A eq'x'", "(eq A 'x')"},
		{"no space after a string", "A eq 'x'or B eq'y'", "(or (eq A 'x') (eq B 'y'))"},
		{"leading and trailing space", "  A eq 1  ", "(eq A 1)"},
		{"tabs and newlines", "A\teq\n1\r\nand\vB eq 2", "(and (eq A 1) (eq B 2))"},
		{"unicode spaces", "A\u00a0eq\u20031", "(eq A 1)"},
		{"empty", "", ""},
		{"blank", " \t\n", ""},

		// Strings.
		{"empty string", "A eq ''", "(eq A '')"},
		{"escaped quote", "A eq 'it''s'", "(eq A 'it''s')"},
		{"only a quote", "A eq ''''", "(eq A '''')"},
		{"two quotes", "A eq ''''''", "(eq A '''''')"},
		{"keywords inside a string", "A eq 'x eq 1 and (y)'", "(eq A 'x eq 1 and (y)')"},
		{"unicode string", "Name eq '日本語 Grüße 🎉'", "(eq Name '日本語 Grüße 🎉')"},
		{"control characters in a string", "A eq 'a\tb\x01'", "(eq A 'a\tb\x01')"},

		// Booleans.
		{"true", "A eq true", "(eq A true)"},
		{"false", "A ne false", "(ne A false)"},

		// Int32 and Int64.
		{"int32", "Age gt 30", "(gt Age 30)"},
		{"negative int32", "A eq -42", "(eq A -42)"},
		{"zero", "A eq 0", "(eq A 0)"},
		{"leading zeros", "A eq 007", "(eq A 7)"},
		{"int32 max", "A eq 2147483647", "(eq A 2147483647)"},
		{"int32 min", "A eq -2147483648", "(eq A -2147483648)"},
		{"int64", "A eq 42L", "(eq A 42L)"},
		{"int64 lower-case suffix", "A eq 42l", "(eq A 42L)"},
		{"int64 beyond int32", "A eq 3000000000L", "(eq A 3000000000L)"},
		{"int64 min", "A eq -9223372036854775808L", "(eq A -9223372036854775808L)"},

		// Doubles.
		{"double", "A le 100.25", "(le A 100.25)"},
		{"double suffix", "A eq 4.2D", "(eq A 4.2)"},
		{"double lower-case suffix", "A eq 4.2d", "(eq A 4.2)"},
		{"integral double by suffix", "A eq 42D", "(eq A 42.0)"},
		{"integral double by fraction", "A eq 42.0", "(eq A 42.0)"},
		{"exponent", "A eq 1e10", "(eq A 1e+10)"},
		{"upper-case negative exponent", "A eq 1E-5", "(eq A 1e-05)"},
		{"exponent with plus and fraction", "A eq 1.5e+3", "(eq A 1500.0)"},
		{"exponent with suffix", "A eq 2e2D", "(eq A 200.0)"},
		{"negative fraction", "A eq -0.5", "(eq A -0.5)"},
		{"negative zero", "A eq -0.0", "(eq A -0.0)"},
		{"underflow to zero", "A eq 1e-400", "(eq A 0.0)"},
		{"largest double", "A eq 1.7976931348623157E308", "(eq A 1.7976931348623157e+308)"},
		{"NaN", "A eq NaN", "(eq A NaN)"},
		{"infinity", "A lt INF", "(lt A INF)"},
		{"negative infinity", "A gt -INF", "(gt A -INF)"},

		// DateTime.
		{"datetime UTC", "T ge datetime'2024-01-01T00:00:00Z'", "(ge T datetime'2024-01-01T00:00:00Z')"},
		{"datetime 7 digits", "T eq datetime'2010-08-13T10:32:38.0453121Z'", "(eq T datetime'2010-08-13T10:32:38.0453121Z')"},
		{"datetime 3 digits", "T eq datetime'2024-05-06T07:08:09.120Z'", "(eq T datetime'2024-05-06T07:08:09.12Z')"},
		{"datetime without zone is UTC", "T eq datetime'2024-01-01T12:00:00'", "(eq T datetime'2024-01-01T12:00:00Z')"},
		{"datetime lower-case z", "T eq datetime'2024-01-01T12:00:00z'", "(eq T datetime'2024-01-01T12:00:00Z')"},
		{"datetime positive offset", "T eq datetime'2024-01-01T01:30:00+01:00'", "(eq T datetime'2024-01-01T00:30:00Z')"},
		{"datetime negative offset crosses a day", "T eq datetime'2024-01-01T20:00:00-05:30'", "(eq T datetime'2024-01-02T01:30:00Z')"},
		{"datetime date only", "T eq datetime'2024-02-29'", "(eq T datetime'2024-02-29T00:00:00Z')"},
		{"datetime 9 digits rounds up", "T eq datetime'2024-01-01T00:00:00.123456789Z'", "(eq T datetime'2024-01-01T00:00:00.1234568Z')"},
		{"datetime 8 digits rounds down", "T eq datetime'2024-01-01T00:00:00.12345674Z'", "(eq T datetime'2024-01-01T00:00:00.1234567Z')"},
		{"datetime half rounds to even down", "T eq datetime'2024-01-01T00:00:00.00000025Z'", "(eq T datetime'2024-01-01T00:00:00.0000002Z')"},
		{"datetime half rounds to even up", "T eq datetime'2024-01-01T00:00:00.00000015Z'", "(eq T datetime'2024-01-01T00:00:00.0000002Z')"},
		{"datetime above half rounds up", "T eq datetime'2024-01-01T00:00:00.000000250001Z'", "(eq T datetime'2024-01-01T00:00:00.0000003Z')"},
		{"datetime rounding carries into the next year", "T eq datetime'2024-12-31T23:59:59.99999999Z'", "(eq T datetime'2025-01-01T00:00:00Z')"},
		{"datetime year 1", "Timestamp gt datetime'0001-01-01T00:00:00Z'", "(gt Timestamp datetime'0001-01-01T00:00:00Z')"},
		{"datetime prefix ignores case", "T eq DateTime'2024-01-01T00:00:00Z'", "(eq T datetime'2024-01-01T00:00:00Z')"},
		{"datetime inner whitespace", "T eq datetime' 2024-01-01T00:00:00Z '", "(eq T datetime'2024-01-01T00:00:00Z')"},

		// Guid and Binary.
		{"guid", "G eq guid'0f8fad5b-d9cb-469f-a165-70867728950e'", "(eq G guid'0f8fad5b-d9cb-469f-a165-70867728950e')"},
		{"guid upper case", "G eq guid'0F8FAD5B-D9CB-469F-A165-70867728950E'", "(eq G guid'0f8fad5b-d9cb-469f-a165-70867728950e')"},
		{"guid N form", "G eq guid'0f8fad5bd9cb469fa16570867728950e'", "(eq G guid'0f8fad5b-d9cb-469f-a165-70867728950e')"},
		{"guid braces", "G eq GUID'{0f8fad5b-d9cb-469f-a165-70867728950e}'", "(eq G guid'0f8fad5b-d9cb-469f-a165-70867728950e')"},
		{"binary X", "B eq X'0aff'", "(eq B X'0aff')"},
		{"binary prefix", "B eq binary'0AFF'", "(eq B X'0aff')"},
		{"binary lower-case x", "B eq x'01'", "(eq B X'01')"},
		{"binary upper-case prefix", "B eq BINARY'01'", "(eq B X'01')"},
		{"empty binary", "B eq X''", "(eq B X'')"},

		// Names.
		{"system properties", "PartitionKey eq 'a' and RowKey eq 'b' and Timestamp lt datetime'2030-01-01T00:00:00Z'",
			"(and (and (eq PartitionKey 'a') (eq RowKey 'b')) (lt Timestamp datetime'2030-01-01T00:00:00Z'))"},
		{"table name", "TableName ge 'a' and TableName lt 'b'", "(and (ge TableName 'a') (lt TableName 'b'))"},
		{"underscore and digits", "_x1 eq 1", "(eq _x1 1)"},
		{"unicode name", "Größe eq 1 and 名前 eq 'x'", "(and (eq Größe 1) (eq 名前 'x'))"},
		{"name that is an operator", "eq eq 1", "(eq eq 1)"},
		{"name that is and", "and eq 1 or or eq 2", "(or (eq and 1) (eq or 2))"},
		{"name with a keyword prefix", "notes eq 'x' and order eq 1", "(and (eq notes 'x') (eq order 1))"},
		{"names are case-sensitive", "partitionkey eq 'a'", "(eq partitionkey 'a')"},
		{"name like a number suffix", "D eq 1", "(eq D 1)"},
		{"INF with suffix is a name", "INFD eq 1", "(eq INFD 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			if got := f.String(); got != tt.want {
				t.Errorf("Parse(%q).String()\n got %s\nwant %s", tt.src, got, tt.want)
			}
			// The OData form must read back to the same tree.
			g, err := Parse(f.OData())
			if err != nil {
				t.Fatalf("Parse(OData %q): %v", f.OData(), err)
			}
			if got := g.String(); got != tt.want {
				t.Errorf("Parse(%q).String()\n got %s\nwant %s", f.OData(), got, tt.want)
			}
		})
	}
}

func TestODataPrint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"empty", "", ""},
		{"comparison", "Age gt 30", "(Age gt 30)"},
		{"flipped", "'a' lt PartitionKey", "(PartitionKey gt 'a')"},
		{"nested", "not (A eq 'x''y' or B eq 2L) and C eq X'00'", "((not ((A eq 'x''y') or (B eq 2L))) and (C eq X'00'))"},
		{"bare boolean", "IsActive", "(IsActive eq true)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.OData(); got != tt.want {
				t.Errorf("OData() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestNilFilter(t *testing.T) {
	t.Parallel()
	var f *Filter
	if f.String() != "" || f.OData() != "" {
		t.Error("nil filter prints text")
	}
	if kr := f.KeyRange(); kr.PartitionKey.Lower != nil || kr.PartitionKey.Upper != nil || kr.RowKey.Lower != nil || kr.RowKey.Upper != nil {
		t.Errorf("nil filter has bounds %+v", kr)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("(", MaxDepth+1) + "A eq 1" + strings.Repeat(")", MaxDepth+1)
	tests := []struct {
		name string
		src  string
		pos  int
		msg  string
	}{
		// Case-sensitivity, as the Table service documents.
		{"upper-case comparison", "A EQ 1", 2, "operators are case-sensitive: write eq"},
		{"upper-case and", "A eq 1 AND B eq 2", 7, "operators are case-sensitive: write and"},
		{"capitalised or", "A eq 1 Or B eq 2", 7, "write or"},
		{"upper-case TRUE is a name", "A eq TRUE", 2, "compares two properties"},

		// Comparison shape.
		{"two literals of different types", "1 eq '1'", 2, "eq compares an Edm.Int32 literal with an Edm.String literal"},
		{"sixteen literal comparisons", strings.Repeat("1 eq 1 and ", 15) + "1 eq 1", 167, "more than 15 comparisons"},
		{"two properties", "A eq B", 2, "compares two properties"},
		{"compare a group", "(A eq 1) eq true", 9, "compares a parenthesised expression"},
		{"compare with a group", "A eq (B)", 2, "compares a parenthesised expression"},
		{"string alone", "'a'", 0, "a literal alone is not a condition"},
		{"literal alone in and", "1 and A eq 1", 0, "a literal alone is not a condition"},
		{"literal alone in parentheses", "(1)", 1, "a literal alone is not a condition"},
		{"literal then junk", "1 A", 2, "expected a comparison operator"},
		{"chained comparison", "A eq 1 eq 2", 7, "expected 'and', 'or' or the end"},
		{"missing right operand", "A eq", 4, "expected a property, a literal or '('"},
		{"missing operand after and", "A eq 1 and", 10, "expected a property, a literal or '('"},
		{"missing operand after not", "not", 3, "expected a property, a literal or '('"},
		{"missing operand after or", "A eq 1 or ", 10, "expected a property"},
		{"null", "A eq null", 5, "null is not supported"},
		{"null flipped", "null eq A", 0, "null is not supported"},
		{"sixteen comparisons", strings.Repeat("A eq 1 and ", 15) + "A eq 1", 165, "more than 15 comparisons"},
		{"sixteen with bare booleans", strings.Repeat("A or ", 15) + "A", 75, "more than 15 comparisons"},

		// Parentheses.
		{"unclosed", "(A eq 1", 7, "expected ')' to close the '(' at position 0"},
		{"unopened", "A eq 1)", 6, "expected 'and', 'or' or the end"},
		{"empty parentheses", "()", 1, "empty parentheses"},
		{"too deep", deep, MaxDepth, "nests deeper than 100 levels"},
		{"too many nots", strings.Repeat("not ", MaxDepth+1) + "A", 4 * MaxDepth, "nests deeper"},

		// Unsupported syntax.
		{"function", "startswith(Name, 'a')", 0, "functions such as startswith() are not supported"},
		{"function after a space", "substringof ('a', Name)", 0, "functions such as substringof()"},
		{"member access", "A/B eq 1", 1, "property paths are not supported"},
		{"symbolic equality", "A = 1", 2, "comparison operators are eq, ne, gt, ge, lt and le"},
		{"symbolic inequality", "A != 1", 2, "comparison operators are"},
		{"symbolic less", "A < 1", 2, "comparison operators are"},
		{"symbolic and", "A eq 1 && B eq 2", 7, "logical operators are and, or and not"},
		{"double quotes", `A eq "x"`, 5, "single quotes"},
		{"plus", "A eq 1 + 2", 7, "arithmetic is not supported"},
		{"spaced minus", "A eq - 1", 5, "only numeric literals may be negative"},
		{"double minus", "A eq --1", 5, "only numeric literals may be negative"},
		{"negative NaN", "A eq -NaN", 5, "only numeric literals may be negative"},
		{"arithmetic keyword", "A add 1 eq 2", 2, "expected 'and', 'or' or the end"},
		{"semicolon", "A eq 1; B eq 2", 6, "unexpected character ';'"},
		{"at sign", "@A eq 1", 0, "unexpected character '@'"},
		{"dollar name", "$it eq 1", 0, "unexpected character '$'"},
		{"invalid UTF-8", "A eq 'x\xffy'", 7, "not valid UTF-8"},

		// Strings.
		{"unterminated string", "A eq 'abc", 5, "unterminated string literal"},
		{"unterminated after escape", "A eq 'abc''", 5, "unterminated string literal"},
		{"unterminated typed literal", "T eq datetime'2024-01-01", 13, "unterminated string literal"},

		// Numbers.
		{"int32 overflow", "A eq 2147483648", 5, "Int32 literal 2147483648 is out of range (append L for an Int64)"},
		{"int32 underflow", "A eq -2147483649", 5, "Int32 literal -2147483649 is out of range"},
		{"int64 overflow", "A eq 9223372036854775808L", 5, "Int64 literal 9223372036854775808L is out of range"},
		{"int64 with a fraction", "A eq 1.5L", 5, "Int64 literal 1.5L must be an integer"},
		{"int64 with an exponent", "A eq 1e5L", 5, "must be an integer"},
		{"decimal", "A eq 1.5M", 5, "Edm.Decimal literal 1.5M is not supported"},
		{"decimal lower-case", "A eq 2m", 5, "Edm.Decimal"},
		{"single", "A eq 1.5f", 5, "Edm.Single literal 1.5f is not supported"},
		{"double overflow", "A eq 1e400", 5, "Double literal 1e400 is out of range"},
		{"negative double overflow", "A eq -1e400", 5, "out of range"},
		{"leading decimal point", "A eq .5", 5, "unexpected character '.'"},
		{"trailing decimal point", "A eq 5.", 7, "expected a digit after the decimal point"},
		{"empty exponent", "A eq 1e", 7, "expected a digit in the exponent"},
		{"signed empty exponent", "A eq 1e+", 8, "expected a digit in the exponent"},
		{"number glued to a name", "A eq 42abc", 7, "expected 'and', 'or' or the end"},
		{"unicode digits", "A eq ٣", 5, "unexpected character '٣'"},

		// DateTime.
		{"month 13", "T eq datetime'2024-13-01T00:00:00Z'", 5, "invalid datetime literal"},
		{"February 30", "T eq datetime'2024-02-30T00:00:00Z'", 5, "invalid datetime literal"},
		{"February 29 in a common year", "T eq datetime'2023-02-29T00:00:00Z'", 5, "invalid datetime literal"},
		{"hour 24", "T eq datetime'2024-01-01T24:00:00Z'", 5, "invalid datetime literal"},
		{"second 60", "T eq datetime'2024-01-01T00:00:60Z'", 5, "invalid datetime literal"},
		{"no seconds", "T eq datetime'2024-01-01T00:00Z'", 5, "invalid datetime literal"},
		{"lower-case t", "T eq datetime'2024-01-01t00:00:00Z'", 5, "invalid datetime literal"},
		{"space separator", "T eq datetime'2024-01-01 00:00:00Z'", 5, "invalid datetime literal"},
		{"empty fraction", "T eq datetime'2024-01-01T00:00:00.Z'", 5, "invalid datetime literal"},
		{"offset beyond 14 hours", "T eq datetime'2024-01-01T00:00:00+14:01'", 5, "invalid datetime literal"},
		{"offset without colon", "T eq datetime'2024-01-01T00:00:00+0100'", 5, "invalid datetime literal"},
		{"trailing junk", "T eq datetime'2024-01-01T00:00:00Zx'", 5, "invalid datetime literal"},
		{"year 0", "T eq datetime'0000-01-01T00:00:00Z'", 5, "invalid datetime literal"},
		{"two-digit year", "T eq datetime'24-01-01T00:00:00Z'", 5, "invalid datetime literal"},
		{"offset before year 1", "T eq datetime'0001-01-01T00:00:00+01:00'", 5, "outside the years 1 to 9999"},
		{"offset after year 9999", "T eq datetime'9999-12-31T23:00:00-01:00'", 5, "outside the years 1 to 9999"},
		{"empty datetime", "T eq datetime''", 5, "invalid datetime literal"},

		// Guid, Binary and prefixes.
		{"short guid", "G eq guid'0f8fad5b-d9cb-469f-a165'", 5, "invalid guid literal"},
		{"guid with a non-hex digit", "G eq guid'0f8fad5b-d9cb-469f-a165-70867728950g'", 5, "invalid guid literal"},
		{"odd binary", "B eq X'abc'", 5, "odd number of hexadecimal digits"},
		{"non-hex binary", "B eq binary'zz'", 5, "not hexadecimal"},
		{"unknown prefix is a name", "A eq foo'x'", 2, "compares two properties"},
		{"name before a string", "A'x'", 1, "expected 'and', 'or' or the end"},
		{"datetimeoffset", "A eq datetimeoffset'2024-01-01T00:00:00Z'", 5, "datetimeoffset literals are not supported"},
		{"time", "A eq time'PT1H'", 5, "time literals are not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.src)
			if err == nil {
				t.Fatalf("Parse(%q) = %s, want an error", tt.src, f)
			}
			var fe *Error
			if !errors.As(err, &fe) {
				t.Fatalf("Parse(%q) error %T %v, want *Error", tt.src, err, err)
			}
			if fe.Pos != tt.pos || !strings.Contains(fe.Msg, tt.msg) {
				t.Errorf("Parse(%q) = error at %d %q, want at %d containing %q", tt.src, fe.Pos, fe.Msg, tt.pos, tt.msg)
			}
		})
	}
}

func TestErrorMapsToInvalidInput(t *testing.T) {
	t.Parallel()
	_, err := Parse("A EQ 1")
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %T, want *Error", err)
	}
	want := "invalid $filter at position 2: expected 'and', 'or' or the end of the filter, found 'EQ' (operators are case-sensitive: write eq)"
	if fe.Error() != want {
		t.Errorf("Error() = %q, want %q", fe.Error(), want)
	}
	ae := fe.APIError()
	if ae.Code != apierr.InvalidInput || ae.HTTPStatus() != http.StatusBadRequest {
		t.Errorf("APIError() = %s %d, want InvalidInput 400", ae.Code, ae.HTTPStatus())
	}
	if !strings.Contains(ae.Text(), "position 2") || !strings.HasPrefix(ae.Text(), apierr.InvalidInput.Message()) {
		t.Errorf("APIError().Text() = %q", ae.Text())
	}
}
