package protocoltest

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// suiteTypes checks that every Edm type round-trips exactly: through the
// SDK's typed EDMEntity where the SDK can carry the value, and on the wire
// where it cannot ("Payload format for Table service operations", property
// types in a JSON feed).
func suiteTypes(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	c := newTable(t, sc, "types")
	table := TableName(t, "types")

	sdkCases := []struct {
		name  string
		value any
	}{
		{"Int64Max", aztables.EDMInt64(math.MaxInt64)},
		{"Int64Min", aztables.EDMInt64(math.MinInt64)},
		{"Int64Zero", aztables.EDMInt64(0)},
		{"Int32Max", int32(math.MaxInt32)},
		{"Int32Min", int32(math.MinInt32)},
		{"Int32Zero", int32(0)},
		{"DoubleFraction", 0.1},
		{"DoubleNegative", -2.5},
		{"BoolTrue", true},
		{"BoolFalse", false},
		{"DateTime100ns", aztables.EDMDateTime(time.Date(2024, 2, 29, 12, 34, 56, 123456700, time.UTC))},
		{"DateTimeMin", aztables.EDMDateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC))},
		{"DateTimeMax", aztables.EDMDateTime(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC))},
		{"DateTimeUnixEpoch", aztables.EDMDateTime(time.Unix(0, 0).UTC())},
		{"Guid", aztables.EDMGUID("0f8fad5b-d9cb-469f-a165-70867728950e")},
		{"BinaryEmpty", aztables.EDMBinary([]byte{})},
		{"BinarySmall", aztables.EDMBinary([]byte{0, 1, 0x7f, 0x80, 0xfe, 0xff})},
		{"Binary64KiB", aztables.EDMBinary(bytes.Repeat([]byte{0xa5, 0x5a, 0x00, 0xff}, 64<<10/4))},
		{"StringEmpty", ""},
		{"String32KChars", strings.Repeat("x", 32<<10)},
		{"String32KUTF16Units", strings.Repeat("é", 32<<10)},
		{"StringUnicode", "日本語 😀 \u05e9\u05dc\u05d5\u05dd e\u0301 \U0001d11e"},
		{"StringJSONEscapes", "quote\" backslash\\ slash/ tab\t newline\n cr\r \u2028\u2029 <>&"},
		{"StringLooksLikeNumber", "12345"},
		{"StringLooksLikeDate", "2024-01-01T00:00:00Z"},
	}
	t.Run("SDK", func(t *testing.T) {
		for i, tc := range sdkCases {
			t.Run(tc.name, func(t *testing.T) {
				rk := strconv.Itoa(i)
				in := aztables.EDMEntity{
					Entity:     aztables.Entity{PartitionKey: "sdk", RowKey: rk},
					Properties: map[string]any{"V": tc.value},
				}
				addEntity(t, c, mustJSON(t, in))
				got, _ := getEDM(t, c, "sdk", rk)
				if !equalProp(got.Properties["V"], tc.value) {
					t.Errorf("got %s (%T), want %s (%T)", short(got.Properties["V"]), got.Properties["V"], short(tc.value), tc.value)
				}
				// The list path encodes the same way as the point read.
				filter := "PartitionKey eq 'sdk' and RowKey eq '" + rk + "'"
				listed, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &filter})
				if len(listed) != 1 {
					t.Fatalf("query returned %d entities", len(listed))
				}
				var le aztables.EDMEntity
				if err := json.Unmarshal(listed[0], &le); err != nil {
					t.Fatal(err)
				}
				if !equalProp(le.Properties["V"], tc.value) {
					t.Errorf("query returned %s (%T), want %s (%T)", short(le.Properties["V"]), le.Properties["V"], short(tc.value), tc.value)
				}
			})
		}
	})

	// Doubles go in as raw JSON with an Edm.Double annotation: the SDK
	// re-encodes bodies through encoding/json, which writes 1.0 as 1 and
	// cannot write NaN at all, so only the annotation keeps them Double.
	doubleCases := []struct {
		name string
		json string // the value as sent
		want float64
		// wire is the string form Azure uses for values JSON numbers
		// cannot hold; "" for finite values.
		wire string
	}{
		{"NaN", `"NaN"`, math.NaN(), "NaN"},
		{"PositiveInfinity", `"Infinity"`, math.Inf(1), "Infinity"},
		{"NegativeInfinity", `"-Infinity"`, math.Inf(-1), "-Infinity"},
		{"SmallestDenormal", `5E-324`, 5e-324, ""},
		{"Largest", `1.7976931348623157E308`, math.MaxFloat64, ""},
		{"NegativeZero", `-0.0`, math.Copysign(0, -1), ""},
		{"PositiveZero", `0.0`, 0, ""},
		{"IntegralOne", `1.0`, 1, ""},
		{"IntegralLarge", `1e21`, 1e21, ""},
		{"IntegralBeyondInt64", `18446744073709551616.0`, 18446744073709551616, ""},
		{"PiDigits", `3.141592653589793`, math.Pi, ""},
	}
	t.Run("Double", func(t *testing.T) {
		for i, tc := range doubleCases {
			t.Run(tc.name, func(t *testing.T) {
				rk := strconv.Itoa(i)
				addEntity(t, c, `{"PartitionKey":"dbl","RowKey":"`+rk+`","D@odata.type":"Edm.Double","D":`+tc.json+`}`)
				resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, "dbl", rk)})
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET: %d %s", resp.StatusCode, truncate(resp.Body))
				}
				checkWireDouble(t, decodeJSON(t, resp.Body), tc.want, tc.wire)
				// The list path encodes the same way as the point read.
				listed := rawListAll(t, srv, table, url.Values{"$filter": {"PartitionKey eq 'dbl' and RowKey eq '" + rk + "'"}}, nil)
				if len(listed) != 1 {
					t.Fatalf("query returned %d entities", len(listed))
				}
				checkWireDouble(t, listed[0], tc.want, tc.wire)
				// What an application using EDMEntity sees.
				got, _ := getEDM(t, c, "dbl", rk)
				v := got.Properties["D"]
				switch {
				case tc.wire != "":
					// The SDK's EDMEntity has no case for Edm.Double and
					// leaves annotated values nil; the value is checked on
					// the wire above.
				case v == nil:
					t.Errorf("EDMEntity reads D as nil: the Go SDK drops a value annotated Edm.Double, so an integral or finite double must go out unannotated in minimalmetadata")
				default:
					f, ok := toFloat(v)
					if !ok || f != tc.want && !(tc.want == 0 && f == 0) {
						t.Errorf("EDMEntity reads D as %v (%T), want %v", v, v, tc.want)
					}
					if _, ok := v.(int32); ok {
						// Not the server's doing: the SDK decodes the body
						// into map[string]any and re-encodes it, so 1.0
						// becomes 1 before EDMEntity infers Int32.
						t.Logf("EDMEntity reads the integral Double as int32 %v: a Go SDK limitation", v)
					}
				}
			})
		}
	})

	t.Run("InferredFromJSON", func(t *testing.T) {
		// Unannotated JSON numbers and booleans infer Int32, Double and
		// Boolean; strings stay strings. Typed $filter comparison shows
		// the stored type without relying on annotations.
		addEntity(t, c, `{"PartitionKey":"infer","RowKey":"r","I":7,"D":7.5,"B":true,"S":"7"}`)
		for _, tc := range []struct {
			filter string
			match  bool
		}{
			{"I eq 7", true},
			{"I eq 7L", false},
			{"I eq '7'", false},
			{"D eq 7.5", true},
			{"B eq true", true},
			{"B eq 'true'", false},
			{"S eq '7'", true},
			{"S eq 7", false},
		} {
			filter := "PartitionKey eq 'infer' and " + tc.filter
			got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &filter})
			if (len(got) == 1) != tc.match {
				t.Errorf("$filter=%s matched %d entities, want match=%v", filter, len(got), tc.match)
			}
		}
	})
}

// checkWireDouble asserts how a Double is written in minimal metadata: NaN
// and ±Infinity as strings with an Edm.Double annotation, finite values as
// JSON numbers that a type-aware reader cannot mistake for Int32.
func checkWireDouble(t *testing.T, body map[string]any, want float64, wire string) {
	t.Helper()
	raw := body["D"]
	if wire != "" {
		if raw != wire || body["D@odata.type"] != "Edm.Double" {
			t.Errorf("wire D=%#v D@odata.type=%v, want %q annotated Edm.Double", raw, body["D@odata.type"], wire)
		}
		return
	}
	n, ok := raw.(json.Number)
	if !ok {
		t.Errorf("wire D=%#v (%T), want a JSON number", raw, raw)
		return
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.Float64bits(f) != math.Float64bits(want) {
		t.Errorf("wire D=%s reads as %v (bits %x), want %v (bits %x)", n, f, math.Float64bits(f), want, math.Float64bits(want))
	}
	// Integral doubles must not look like Int32 (or Int64) on the wire.
	if !strings.ContainsAny(n.String(), ".eE") && body["D@odata.type"] != "Edm.Double" {
		t.Errorf("wire D=%s looks like an integer: an Edm.Double needs a fraction or exponent", n)
	}
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int32:
		return float64(x), true
	case aztables.EDMInt64:
		return float64(x), true
	}
	return 0, false
}

// short abbreviates long values in failure messages.
func short(v any) string {
	s := strings.ReplaceAll(strings.ReplaceAll(toString(v), "\n", `\n`), "\t", `\t`)
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func toString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	return string(b)
}
