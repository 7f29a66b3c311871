package edm

import (
	"math"
	"testing"
	"time"
)

func TestAppendString(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"empty", "", `""`},
		{"plain ASCII", "hello world", `"hello world"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"slash not escaped", "a/b", `"a/b"`},
		{"short escapes", "\b\f\n\r\t", `"\b\f\n\r\t"`},
		{"other controls", "\x00\x01\x1f", `"\u0000\u0001\u001f"`},
		{"DEL kept", "\x7f", "\"\x7f\""},
		{"UTF-8 kept", "café 日本 😀", `"café 日本 😀"`},
		{"invalid UTF-8 replaced", "a\xffb", `"a\ufffdb"`},
		{"truncated sequence replaced", "\xe6\x97", `"\ufffd\ufffd"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(AppendString([]byte("x"), tc.in)); got != "x"+tc.want {
				t.Fatalf("AppendString(%q) = %s, want x%s", tc.in, got, tc.want)
			}
		})
	}
}

func TestAppendValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Value
		want string
	}{
		{"string", NewString("a\"b"), `"a\"b"`},
		{"guid", NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"), `"c9da6455-213d-42c9-9a79-3e9149a57833"`},
		{"binary", NewBinary([]byte{0, 1, 2, 255}), `"AAEC/w=="`},
		{"binary empty", NewBinary(nil), `""`},
		{"true", NewBoolean(true), `true`},
		{"false", NewBoolean(false), `false`},
		{"int32 min", NewInt32(math.MinInt32), `-2147483648`},
		{"int64 as string", NewInt64(math.MaxInt64), `"9223372036854775807"`},
		{"int64 min", NewInt64(math.MinInt64), `"-9223372036854775808"`},
		{"double fraction", NewDouble(1.5), `1.5`},
		{"double integral gets .0", NewDouble(1), `1.0`},
		{"double large integral", NewDouble(100000), `100000.0`},
		{"double exponent form", NewDouble(6824053932181), `6.824053932181e+12`},
		{"double 1e21", NewDouble(1e21), `1e+21`},
		{"double zero", NewDouble(0), `0.0`},
		{"double minus zero", NewDouble(math.Copysign(0, -1)), `-0.0`},
		{"double smallest", NewDouble(5e-324), `5e-324`},
		{"double largest", NewDouble(math.MaxFloat64), `1.7976931348623157e+308`},
		{"double NaN", NewDouble(math.NaN()), `"NaN"`},
		{"double +Inf", NewDouble(math.Inf(1)), `"Infinity"`},
		{"double -Inf", NewDouble(math.Inf(-1)), `"-Infinity"`},
		{"datetime", NewDateTime(time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)), `"2024-12-23T09:20:10.1623783Z"`},
		{"zero value is null", Value{}, `null`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(AppendValue(nil, tc.in)); got != tc.want {
				t.Fatalf("AppendValue = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestAnnotated(t *testing.T) {
	t.Parallel()
	dt := NewDateTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC))
	guid := NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833")
	tests := []struct {
		name                string
		v                   Value
		none, minimal, full bool
	}{
		{"string", NewString("s"), false, false, false},
		{"boolean", NewBoolean(true), false, false, false},
		{"int32", NewInt32(1), false, false, false},
		{"int64", NewInt64(1), false, true, true},
		{"double finite", NewDouble(1.5), false, false, false},
		{"double integral", NewDouble(2), false, false, false},
		{"double NaN", NewDouble(math.NaN()), false, true, true},
		{"double +Inf", NewDouble(math.Inf(1)), false, true, true},
		{"double -Inf", NewDouble(math.Inf(-1)), false, true, true},
		{"datetime", dt, false, true, true},
		{"guid", guid, false, true, true},
		{"binary", NewBinary([]byte{1}), false, true, true},
		{"zero value", Value{}, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []struct {
				level Metadata
				want  bool
			}{{NoMetadata, tc.none}, {MinimalMetadata, tc.minimal}, {FullMetadata, tc.full}} {
				if got := Annotated(tc.v, c.level); got != c.want {
					t.Errorf("Annotated(%v) = %v, want %v", c.level, got, c.want)
				}
			}
		})
	}
}

func TestAppendProperty(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		prop  string
		v     Value
		level Metadata
		want  string
	}{
		{"int64 minimal", "Count", NewInt64(42), MinimalMetadata, `"Count@odata.type":"Edm.Int64","Count":"42"`},
		{"int64 nometadata", "Count", NewInt64(42), NoMetadata, `"Count":"42"`},
		{"int32 minimal", "Age", NewInt32(23), MinimalMetadata, `"Age":23`},
		{"int32 full", "Age", NewInt32(23), FullMetadata, `"Age":23`},
		{"string full", "Name", NewString("x"), FullMetadata, `"Name":"x"`},
		{"double NaN minimal", "D", NewDouble(math.NaN()), MinimalMetadata, `"D@odata.type":"Edm.Double","D":"NaN"`},
		{"double integral minimal", "D", NewDouble(20), MinimalMetadata, `"D":20.0`},
		{"boolean full", "B", NewBoolean(false), FullMetadata, `"B":false`},
		{"escaped name", "a\"b", NewInt64(1), MinimalMetadata, `"a\"b@odata.type":"Edm.Int64","a\"b":"1"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(AppendProperty(nil, tc.prop, tc.v, tc.level)); got != tc.want {
				t.Fatalf("AppendProperty = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestMetadataString(t *testing.T) {
	t.Parallel()
	for level, want := range map[Metadata]string{NoMetadata: "nometadata", MinimalMetadata: "minimalmetadata", FullMetadata: "fullmetadata", 9: "invalid"} {
		if got := level.String(); got != want {
			t.Errorf("Metadata(%d).String() = %q, want %q", level, got, want)
		}
	}
}
