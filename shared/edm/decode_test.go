package edm

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// prop is one decoded property, for comparing decoder output.
type prop struct {
	Name  string
	Value Value
	Null  bool
}

func (p prop) String() string {
	if p.Null {
		return fmt.Sprintf("%s=null(%v)", p.Name, p.Value.Type)
	}
	return fmt.Sprintf("%s=%v:%#v", p.Name, p.Value.Type, p.Value)
}

func decodeAll(data string) ([]prop, error) {
	var out []prop
	err := DecodeObject([]byte(data), func(name string, v Value, null bool) error {
		out = append(out, prop{name, v, null})
		return nil
	})
	return out, err
}

func equalProps(a, b []prop) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Null != b[i].Null {
			return false
		}
		if a[i].Null {
			// A null carries only its annotated type, possibly none.
			if a[i].Value.Type != b[i].Value.Type {
				return false
			}
			continue
		}
		if !a[i].Value.Equal(b[i].Value) {
			return false
		}
	}
	return true
}

func p(name string, v Value) prop { return prop{Name: name, Value: v} }

func TestDecodeObjectValues(t *testing.T) {
	t.Parallel()
	negZero := math.Copysign(0, -1)
	dt := time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)
	const guid = "c9da6455-213d-42c9-9a79-3e9149a57833"
	tests := []struct {
		name string
		in   string
		want []prop
	}{
		{"empty object", `{}`, nil},
		{"whitespace everywhere", " \t\r\n{ \"a\" \n:\t\"x\" , \"b\" : 1 }\n ", []prop{p("a", NewString("x")), p("b", NewInt32(1))}},
		{"byte order mark", "\xEF\xBB\xBF{\"a\":true}", []prop{p("a", NewBoolean(true))}},
		{"document order kept", `{"z":1,"a":2,"m":3}`, []prop{p("z", NewInt32(1)), p("a", NewInt32(2)), p("m", NewInt32(3))}},

		// Type inference without annotations.
		{"string inferred", `{"s":"hello"}`, []prop{p("s", NewString("hello"))}},
		{"empty string", `{"s":""}`, []prop{p("s", NewString(""))}},
		{"long string with escapes past a word", `{"LongPropertyName":"abcdefghij\"kl\\mnopqrstuvw\u00e9xyz"}`,
			[]prop{p("LongPropertyName", NewString(`abcdefghij"kl\mnopqrstuvwéxyz`))}},
		{"long names paired with annotations", `{"CreatedOnDate@odata.type":"Edm.Int64","CreatedOnDay":"1","CreatedOnDate":"2"}`,
			[]prop{p("CreatedOnDay", NewString("1")), p("CreatedOnDate", NewInt64(2))}},
		{"true and false", `{"t":true,"f":false}`, []prop{p("t", NewBoolean(true)), p("f", NewBoolean(false))}},
		{"int32 inferred", `{"n":42}`, []prop{p("n", NewInt32(42))}},
		{"int32 max", `{"n":2147483647}`, []prop{p("n", NewInt32(math.MaxInt32))}},
		{"int32 min", `{"n":-2147483648}`, []prop{p("n", NewInt32(math.MinInt32))}},
		{"beyond int32 is double", `{"n":2147483648}`, []prop{p("n", NewDouble(2147483648))}},
		{"3000000000 is double", `{"n":3000000000}`, []prop{p("n", NewDouble(3e9))}},
		{"below int32 is double", `{"n":-2147483649}`, []prop{p("n", NewDouble(-2147483649))}},
		{"huge integral is double", `{"n":123456789012345678901234567890}`, []prop{p("n", NewDouble(1.2345678901234568e29))}},
		{"fraction is double", `{"n":1.5}`, []prop{p("n", NewDouble(1.5))}},
		{"integral fraction is double", `{"n":1.0}`, []prop{p("n", NewDouble(1))}},
		{"exponent is double", `{"n":1e2}`, []prop{p("n", NewDouble(100))}},
		{"minus zero integer is int32", `{"n":-0}`, []prop{p("n", NewInt32(0))}},
		{"minus zero double keeps sign", `{"n":-0.0}`, []prop{p("n", NewDouble(negZero))}},
		{"smallest subnormal", `{"n":5E-324}`, []prop{p("n", NewDouble(5e-324))}},
		{"largest double", `{"n":1.7976931348623157E308}`, []prop{p("n", NewDouble(math.MaxFloat64))}},
		{"underflow rounds to zero", `{"n":1e-400}`, []prop{p("n", NewDouble(0))}},

		// Annotations, before and after the value.
		{"int64 annotation after", `{"n":"9223372036854775807","n@odata.type":"Edm.Int64"}`, []prop{p("n", NewInt64(math.MaxInt64))}},
		{"int64 annotation before", `{"n@odata.type":"Edm.Int64","n":"-9223372036854775808"}`, []prop{p("n", NewInt64(math.MinInt64))}},
		{"int64 as number", `{"n@odata.type":"Edm.Int64","n":42}`, []prop{p("n", NewInt64(42))}},
		{"int64 leading zeros", `{"n@odata.type":"Edm.Int64","n":"007"}`, []prop{p("n", NewInt64(7))}},
		{"int32 annotated", `{"n@odata.type":"Edm.Int32","n":-7}`, []prop{p("n", NewInt32(-7))}},
		{"int32 as string", `{"n@odata.type":"Edm.Int32","n":"123"}`, []prop{p("n", NewInt32(123))}},
		{"double annotated integral", `{"d@odata.type":"Edm.Double","d":1}`, []prop{p("d", NewDouble(1))}},
		{"double NaN", `{"d@odata.type":"Edm.Double","d":"NaN"}`, []prop{p("d", NewDouble(math.NaN()))}},
		{"double Infinity", `{"d":"Infinity","d@odata.type":"Edm.Double"}`, []prop{p("d", NewDouble(math.Inf(1)))}},
		{"double -Infinity", `{"d@odata.type":"Edm.Double","d":"-Infinity"}`, []prop{p("d", NewDouble(math.Inf(-1)))}},
		{"double INF", `{"d@odata.type":"Edm.Double","d":"INF"}`, []prop{p("d", NewDouble(math.Inf(1)))}},
		{"double -INF", `{"d@odata.type":"Edm.Double","d":"-INF"}`, []prop{p("d", NewDouble(math.Inf(-1)))}},
		{"double numeric string", `{"d@odata.type":"Edm.Double","d":"-2.5e3"}`, []prop{p("d", NewDouble(-2500))}},
		{"double minus zero string", `{"d@odata.type":"Edm.Double","d":"-0"}`, []prop{p("d", NewDouble(negZero))}},
		{"boolean annotated", `{"b@odata.type":"Edm.Boolean","b":false}`, []prop{p("b", NewBoolean(false))}},
		// Azure Storage Explorer sends typed values as strings, the
		// annotation after the value; the service parses them as the type.
		{"boolean as string", `{"b":"false","b@odata.type":"Edm.Boolean"}`, []prop{p("b", NewBoolean(false))}},
		{"boolean as string true", `{"b@odata.type":"Edm.Boolean","b":"true"}`, []prop{p("b", NewBoolean(true))}},
		{"boolean as string any case", `{"b@odata.type":"Edm.Boolean","b":"False"}`, []prop{p("b", NewBoolean(false))}},
		{"int32 as string after", `{"i":"32","i@odata.type":"Edm.Int32"}`, []prop{p("i", NewInt32(32))}},
		{"double as string after", `{"d":"1.5","d@odata.type":"Edm.Double"}`, []prop{p("d", NewDouble(1.5))}},
		{"string annotated", `{"s@odata.type":"Edm.String","s":"1"}`, []prop{p("s", NewString("1"))}},
		{"datetime", `{"t@odata.type":"Edm.DateTime","t":"2024-12-23T09:20:10.1623783Z"}`, []prop{p("t", NewDateTime(dt))}},
		{"datetime offset", `{"t@odata.type":"Edm.DateTime","t":"2024-12-23T10:20:10.1623783+01:00"}`, []prop{p("t", NewDateTime(dt))}},
		{"guid canonicalised", `{"g@odata.type":"Edm.Guid","g":"C9DA6455-213D-42C9-9A79-3E9149A57833"}`, []prop{p("g", NewGuid(guid))}},
		{"binary", `{"b@odata.type":"Edm.Binary","b":"AAEC/w=="}`, []prop{p("b", NewBinary([]byte{0, 1, 2, 255}))}},
		{"binary escaped slash", `{"b@odata.type":"Edm.Binary","b":"AAEC\/w=="}`, []prop{p("b", NewBinary([]byte{0, 1, 2, 255}))}},
		{"binary empty", `{"b@odata.type":"Edm.Binary","b":""}`, []prop{p("b", NewBinary([]byte{}))}},
		{"type name escaped", `{"n@odata.type":"Edm.Int\u0036\u0034","n":"5"}`, []prop{p("n", NewInt64(5))}},
		{"keys are ordinary here", `{"PartitionKey":"pk","RowKey":"rk","Timestamp":"x"}`, []prop{p("PartitionKey", NewString("pk")), p("RowKey", NewString("rk")), p("Timestamp", NewString("x"))}},

		// Nulls.
		{"null", `{"a":null}`, []prop{{Name: "a", Null: true}}},
		{"annotated null", `{"a@odata.type":"Edm.Int64","a":null}`, []prop{{Name: "a", Value: Value{Type: Int64}, Null: true}}},

		// Ignored members.
		{"odata members ignored", `{"odata.metadata":"x","odata.etag":"W/\"1\"","odata.type":"a.b","odata.id":"u","odata.editLink":"e","a":1}`, []prop{p("a", NewInt32(1))}},
		{"odata member of any kind", `{"odata.count":5,"odata.flag":null,"a":1}`, []prop{p("a", NewInt32(1))}},
		{"instance annotation ignored", `{"@odata.etag":"x","a":1}`, []prop{p("a", NewInt32(1))}},
		{"foreign property annotation ignored", `{"a@my.term":"x","a":1}`, []prop{p("a", NewInt32(1))}},
		{"orphan type annotation ignored", `{"a@odata.type":"Edm.Int64","b":1}`, []prop{p("b", NewInt32(1))}},
		{"annotation of an odata member ignored", `{"odata.etag@odata.type":"Edm.String","a":1}`, []prop{p("a", NewInt32(1))}},

		// Strings and escapes.
		{"escapes", `{"s":"\"\\\/\b\f\n\r\t"}`, []prop{p("s", NewString("\"\\/\b\f\n\r\t"))}},
		{"unicode escape", `{"s":"caf\u00e9 \u00E9"}`, []prop{p("s", NewString("café é"))}},
		{"surrogate pair", `{"s":"\ud83d\ude00"}`, []prop{p("s", NewString("😀"))}},
		{"raw UTF-8", `{"s":"日本語 😀"}`, []prop{p("s", NewString("日本語 😀"))}},
		{"escaped NUL", `{"s":"a\u0000b"}`, []prop{p("s", NewString("a\x00b"))}},
		{"escaped name", `{"\u0041ge":30}`, []prop{p("Age", NewInt32(30))}},
		{"unicode name", `{"Prénom":"x","名前":"y"}`, []prop{p("Prénom", NewString("x")), p("名前", NewString("y"))}},
		{"annotation of escaped name", `{"\u0041ge@odata.type":"Edm.Int64","Age":"30"}`, []prop{p("Age", NewInt64(30))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeAll(tc.in)
			if err != nil {
				t.Fatalf("DecodeObject(%s): %v", tc.in, err)
			}
			if !equalProps(got, tc.want) {
				t.Fatalf("DecodeObject(%s)\n got %v\nwant %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestDecodeObjectErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       string
		kind     ErrorKind
		property string
	}{
		// Syntax.
		{"empty body", ``, ErrSyntax, ""},
		{"only spaces", `   `, ErrSyntax, ""},
		{"array body", `[]`, ErrSyntax, ""},
		{"string body", `"a"`, ErrSyntax, ""},
		{"unterminated object", `{"a":1`, ErrSyntax, ""},
		{"unterminated string", `{"a":"x`, ErrSyntax, ""},
		{"unterminated name", `{"a`, ErrSyntax, ""},
		{"trailing comma", `{"a":1,}`, ErrSyntax, ""},
		{"leading comma", `{,"a":1}`, ErrSyntax, ""},
		{"missing colon", `{"a" 1}`, ErrSyntax, ""},
		{"missing value", `{"a":}`, ErrSyntax, ""},
		{"missing comma", `{"a":1 "b":2}`, ErrSyntax, ""},
		{"unquoted name", `{a:1}`, ErrSyntax, ""},
		{"single quotes", `{'a':1}`, ErrSyntax, ""},
		{"data after object", `{}x`, ErrSyntax, ""},
		{"second object", `{}{}`, ErrSyntax, ""},
		{"leading zero", `{"a":01}`, ErrSyntax, ""},
		{"lone minus", `{"a":-}`, ErrSyntax, ""},
		{"dot without digits", `{"a":1.}`, ErrSyntax, ""},
		{"leading dot", `{"a":.5}`, ErrSyntax, ""},
		{"exponent without digits", `{"a":1e}`, ErrSyntax, ""},
		{"plus sign", `{"a":+1}`, ErrSyntax, ""},
		{"bare NaN", `{"a":NaN}`, ErrSyntax, ""},
		{"bare Infinity", `{"a":Infinity}`, ErrSyntax, ""},
		{"truncated true", `{"a":tru}`, ErrSyntax, ""},
		{"true with tail", `{"a":truex}`, ErrSyntax, ""},
		{"capital True", `{"a":True}`, ErrSyntax, ""},
		{"number with tail", `{"a":12a}`, ErrSyntax, ""},
		{"raw newline in string", "{\"a\":\"x\ny\"}", ErrSyntax, ""},
		{"raw tab in name", "{\"a\tb\":1}", ErrSyntax, ""},
		{"bad escape", `{"a":"\x"}`, ErrSyntax, ""},
		{"short unicode escape", `{"a":"\u12"}`, ErrSyntax, ""},
		{"non-hex unicode escape", `{"a":"\u12g4"}`, ErrSyntax, ""},
		{"escape at end", `{"a":"\`, ErrSyntax, ""},
		{"lone high surrogate", `{"a":"\ud83d"}`, ErrSyntax, ""},
		{"lone high surrogate then text", `{"a":"\ud83dxy"}`, ErrSyntax, ""},
		{"high surrogate then non-low", `{"a":"\ud83d\u0041"}`, ErrSyntax, ""},
		{"lone low surrogate", `{"a":"\ude00"}`, ErrSyntax, ""},
		{"invalid UTF-8 in value", "{\"a\":\"\xff\"}", ErrSyntax, ""},
		{"invalid UTF-8 in name", "{\"\xc3\":1}", ErrSyntax, ""},
		{"UTF-8 encoded surrogate", "{\"a\":\"\xed\xa0\x80\"}", ErrSyntax, ""},
		{"overlong UTF-8", "{\"a\":\"\xc0\xaf\"}", ErrSyntax, ""},
		{"invalid UTF-8 in ignored member", "{\"odata.etag\":\"\xff\",\"a\":1}", ErrSyntax, ""},

		// Nested values.
		{"nested object", `{"a":{"b":1}}`, ErrNested, "a"},
		{"nested array", `{"list":[1,2]}`, ErrNested, "list"},
		{"nested in ignored member", `{"odata.x":{}}`, ErrNested, "odata.x"},

		// Duplicates.
		{"duplicate property", `{"a":1,"a":2}`, ErrDuplicate, "a"},
		{"duplicate via escape", `{"a":1,"\u0061":2}`, ErrDuplicate, "a"},
		{"duplicate annotation", `{"a@odata.type":"Edm.Int64","a@odata.type":"Edm.Int64","a":"1"}`, ErrDuplicate, "a"},
		{"duplicate null", `{"a":null,"a":null}`, ErrDuplicate, "a"},
		{"duplicate in large object", largeObject(smallObject, `"p7":1`), ErrDuplicate, "p7"},
		// Names of 8 bytes and more hash by words (hashName).
		{"duplicate 8-byte name", `{"abcdefgh":1,"abcdefgh":2}`, ErrDuplicate, "abcdefgh"},
		{"duplicate 17-byte name", `{"OrderNumberTotal1":1,"x":0,"OrderNumberTotal1":2}`, ErrDuplicate, "OrderNumberTotal1"},
		{"duplicate long name via escape", `{"OrderNumberTotal":1,"OrderNumber\u0054otal":2}`, ErrDuplicate, "OrderNumberTotal"},
		{"duplicate long annotation", `{"CreatedOnDate@odata.type":"Edm.DateTime","CreatedOnDate@odata.type":"Edm.DateTime"}`, ErrDuplicate, "CreatedOnDate"},

		// Strings scanned eight bytes at a time (skipPlain) stop at the
		// first byte that needs a look, wherever it falls in a word.
		{"control character after 8 bytes", "{\"a\":\"abcdefghi\x01jk\"}", ErrSyntax, ""},
		{"control character at byte 15", "{\"a\":\"abcdefghijklmno\x1f\"}", ErrSyntax, ""},
		{"invalid UTF-8 after 8 bytes", "{\"a\":\"abcdefgh\xff\"}", ErrSyntax, ""},
		{"invalid escape after 8 bytes", `{"a":"abcdefghij\q"}`, ErrSyntax, ""},
		{"unterminated long string", `{"a":"abcdefghijklmnopqrstuvwxyz`, ErrSyntax, ""},

		// Types.
		{"unknown type", `{"a@odata.type":"Edm.Decimal","a":"1"}`, ErrUnknownType, "a"},
		{"type without prefix", `{"a@odata.type":"Int64","a":"1"}`, ErrUnknownType, "a"},
		{"type wrong case", `{"a@odata.type":"edm.int64","a":"1"}`, ErrUnknownType, "a"},
		{"type as number", `{"a@odata.type":5,"a":"1"}`, ErrUnknownType, "a"},
		{"type as null", `{"a@odata.type":null,"a":"1"}`, ErrUnknownType, "a"},
		{"unknown type on orphan", `{"a@odata.type":"Edm.Nope"}`, ErrUnknownType, "a"},

		// Values that do not fit their type.
		{"int64 overflow", `{"a@odata.type":"Edm.Int64","a":"9223372036854775808"}`, ErrBadValue, "a"},
		{"int64 underflow", `{"a@odata.type":"Edm.Int64","a":"-9223372036854775809"}`, ErrBadValue, "a"},
		{"int64 fraction", `{"a@odata.type":"Edm.Int64","a":"1.5"}`, ErrBadValue, "a"},
		{"int64 number fraction", `{"a@odata.type":"Edm.Int64","a":1.0}`, ErrBadValue, "a"},
		{"int64 text", `{"a@odata.type":"Edm.Int64","a":"abc"}`, ErrBadValue, "a"},
		{"int64 empty", `{"a@odata.type":"Edm.Int64","a":""}`, ErrBadValue, "a"},
		{"int64 plus sign", `{"a@odata.type":"Edm.Int64","a":"+1"}`, ErrBadValue, "a"},
		{"int64 lone minus", `{"a@odata.type":"Edm.Int64","a":"-"}`, ErrBadValue, "a"},
		{"int64 spaces", `{"a@odata.type":"Edm.Int64","a":" 1"}`, ErrBadValue, "a"},
		{"int64 boolean", `{"a@odata.type":"Edm.Int64","a":true}`, ErrBadValue, "a"},
		{"int32 overflow", `{"a@odata.type":"Edm.Int32","a":2147483648}`, ErrBadValue, "a"},
		{"int32 underflow string", `{"a@odata.type":"Edm.Int32","a":"-2147483649"}`, ErrBadValue, "a"},
		{"int32 exponent", `{"a@odata.type":"Edm.Int32","a":1e2}`, ErrBadValue, "a"},
		{"double text", `{"a@odata.type":"Edm.Double","a":"abc"}`, ErrBadValue, "a"},
		{"double nan lower", `{"a@odata.type":"Edm.Double","a":"nan"}`, ErrBadValue, "a"},
		{"double hex string", `{"a@odata.type":"Edm.Double","a":"0x10"}`, ErrBadValue, "a"},
		{"double underscore string", `{"a@odata.type":"Edm.Double","a":"1_0"}`, ErrBadValue, "a"},
		{"double boolean", `{"a@odata.type":"Edm.Double","a":false}`, ErrBadValue, "a"},
		{"double overflow number", `{"a@odata.type":"Edm.Double","a":1e400}`, ErrOutOfRange, "a"},
		{"double overflow string", `{"a@odata.type":"Edm.Double","a":"-1e400"}`, ErrOutOfRange, "a"},
		{"inferred double overflow", `{"a":1.7976931348623159E308}`, ErrOutOfRange, "a"},
		{"boolean as a string that is not one", `{"a@odata.type":"Edm.Boolean","a":"yes"}`, ErrBadValue, "a"},
		{"boolean as a string with spaces", `{"a@odata.type":"Edm.Boolean","a":" true"}`, ErrBadValue, "a"},
		{"boolean as an empty string", `{"a@odata.type":"Edm.Boolean","a":""}`, ErrBadValue, "a"},
		{"int32 as a string that is a double", `{"a@odata.type":"Edm.Int32","a":"1.5"}`, ErrBadValue, "a"},
		{"double as a string that is not one", `{"a@odata.type":"Edm.Double","a":"1.5x"}`, ErrBadValue, "a"},
		{"boolean as number", `{"a@odata.type":"Edm.Boolean","a":1}`, ErrBadValue, "a"},
		{"string as number", `{"a@odata.type":"Edm.String","a":1}`, ErrBadValue, "a"},
		{"datetime malformed", `{"a@odata.type":"Edm.DateTime","a":"yesterday"}`, ErrBadValue, "a"},
		{"datetime as number", `{"a@odata.type":"Edm.DateTime","a":0}`, ErrBadValue, "a"},
		{"datetime before 1601", `{"a@odata.type":"Edm.DateTime","a":"0001-01-01T00:00:00Z"}`, ErrOutOfRange, "a"},
		{"guid malformed", `{"a@odata.type":"Edm.Guid","a":"not-a-guid"}`, ErrBadValue, "a"},
		{"guid as number", `{"a@odata.type":"Edm.Guid","a":1}`, ErrBadValue, "a"},
		{"binary not base64", `{"a@odata.type":"Edm.Binary","a":"***"}`, ErrBadValue, "a"},
		{"binary missing padding", `{"a@odata.type":"Edm.Binary","a":"AAEC/w"}`, ErrBadValue, "a"},
		{"binary url alphabet", `{"a@odata.type":"Edm.Binary","a":"AAEC_w=="}`, ErrBadValue, "a"},
		{"binary as number", `{"a@odata.type":"Edm.Binary","a":5}`, ErrBadValue, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			called := false
			err := DecodeObject([]byte(tc.in), func(string, Value, bool) error {
				called = true
				return nil
			})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("DecodeObject(%q) error = %v, want *Error of kind %v", tc.in, err, tc.kind)
			}
			if e.Kind != tc.kind || e.Property != tc.property {
				t.Fatalf("DecodeObject(%q) = %v (kind %v, property %q), want kind %v, property %q", tc.in, err, e.Kind, e.Property, tc.kind, tc.property)
			}
			if e.Error() == "" {
				t.Fatal("empty error message")
			}
			// Structural errors are found before any property is handed out.
			if called && tc.kind != ErrBadValue && tc.kind != ErrOutOfRange {
				t.Fatalf("fn was called before a %v error", tc.kind)
			}
		})
	}
}

// largeObject builds an object with n distinct Int32 members plus extra.
func largeObject(n int, extra string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `"p%d":%d,`, i, i)
	}
	b.WriteString(extra)
	b.WriteByte('}')
	return b.String()
}

func TestDecodeObjectLargeObjectPairsAnnotations(t *testing.T) {
	t.Parallel()
	// More members than smallObject takes the map path.
	var b strings.Builder
	b.WriteByte('{')
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%2 == 0 {
			fmt.Fprintf(&b, `"n%d@odata.type":"Edm.Int64","n%d":"%d"`, i, i, i)
		} else {
			fmt.Fprintf(&b, `"n%d":%d,"n%d@odata.type":"Edm.Int64"`, i, i, i)
		}
	}
	b.WriteByte('}')
	got, err := decodeAll(b.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 100 {
		t.Fatalf("got %d properties, want 100", len(got))
	}
	for i, pr := range got {
		if want := NewInt64(int64(i)); pr.Name != fmt.Sprintf("n%d", i) || !pr.Value.Equal(want) {
			t.Fatalf("property %d = %v, want n%d=%v", i, pr, i, want)
		}
	}
}

func TestDecodeObjectCallbackError(t *testing.T) {
	t.Parallel()
	stop := errors.New("stop")
	calls := 0
	err := DecodeObject([]byte(`{"a":1,"b":2,"c":3}`), func(name string, _ Value, _ bool) error {
		calls++
		if name == "b" {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("error = %v, want the callback's error returned as is", err)
	}
	if calls != 2 {
		t.Fatalf("fn called %d times, want 2", calls)
	}
}

func TestDecodeObjectDoesNotAliasInput(t *testing.T) {
	t.Parallel()
	// DecodeObject must see this very slice: decodeAll would hand it a copy.
	data := []byte(`{"s":"hello","n@odata.type":"Edm.Binary","n":"AQI="}`)
	var got []prop
	err := DecodeObject(data, func(name string, v Value, null bool) error {
		got = append(got, prop{name, v, null})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 'x'
	}
	if got[0].Name != "s" || got[0].Value.Str != "hello" || got[1].Name != "n" || got[1].Value.Bin[0] != 1 {
		t.Fatalf("decoded values changed with the input: %v", got)
	}
}

func TestDecodeObjectErrorQuotesAShortenedValue(t *testing.T) {
	t.Parallel()
	// A huge bad value must not make a huge message, and the cut keeps
	// whole characters.
	value := strings.Repeat("a", 63) + "é" + strings.Repeat("b", 1000)
	_, err := decodeAll(`{"n@odata.type":"Edm.Int64","n":"` + value + `"}`)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrBadValue {
		t.Fatalf("error = %v, want a bad value", err)
	}
	if !strings.HasSuffix(e.Msg, `"...`) || strings.Contains(e.Msg, `\x`) || len(e.Msg) > 100 {
		t.Fatalf("message = %q, want the value cut at a character boundary", e.Msg)
	}
}
