package dynamostore

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/edm"
)

// storedForm describes an attribute value compactly: "S:x", "N:1", "B:3"
// (length), "BOOL:true"; a value stored under the typed name gets a leading
// "@", as in "@N:1".
func storedForm(av types.AttributeValue, typed bool) string {
	if typed {
		return "@" + storedForm(av, false)
	}
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + a.Value
	case *types.AttributeValueMemberN:
		return "N:" + a.Value
	case *types.AttributeValueMemberB:
		if a.Value == nil {
			return "B:nil"
		}
		return "B:" + strings.Repeat("x", len(a.Value))
	case *types.AttributeValueMemberBOOL:
		if a.Value {
			return "BOOL:true"
		}
		return "BOOL:false"
	}
	return "?"
}

func TestValueEncoding(t *testing.T) {
	t.Parallel()
	dt := time.Date(2024, 2, 29, 12, 34, 56, 123456700, time.UTC)
	cases := []struct {
		name  string
		value edm.Value
		want  string // stored form
	}{
		{"StringEmpty", edm.NewString(""), "S:"},
		{"String", edm.NewString("héllo 😀"), "S:héllo 😀"},
		{"BinaryEmpty", edm.NewBinary([]byte{}), "B:"},
		{"BinaryNil", edm.NewBinary(nil), "B:"},
		{"Binary", edm.NewBinary([]byte{0, 1, 255}), "B:xxx"},
		{"BooleanTrue", edm.NewBoolean(true), "BOOL:true"},
		{"BooleanFalse", edm.NewBoolean(false), "BOOL:false"},
		{"Int32", edm.NewInt32(42), "N:42"},
		{"Int32Min", edm.NewInt32(math.MinInt32), "N:-2147483648"},
		{"Int32Max", edm.NewInt32(math.MaxInt32), "N:2147483647"},
		{"Int64", edm.NewInt64(42), "@N:42"},
		{"Int64Min", edm.NewInt64(math.MinInt64), "@N:-9223372036854775808"},
		{"Int64Max", edm.NewInt64(math.MaxInt64), "@N:9223372036854775807"},
		{"DoubleFraction", edm.NewDouble(2.5), "N:2.5"},
		{"DoubleOneTenth", edm.NewDouble(0.1), "N:0.1"},
		{"DoubleIntegralTagged", edm.NewDouble(3), "@S:3"},
		{"DoubleZeroTagged", edm.NewDouble(0), "@S:0"},
		{"DoubleInt32MinTagged", edm.NewDouble(math.MinInt32), "@S:-2.147483648e+09"},
		{"DoubleBeyondInt32", edm.NewDouble(2147483648), "N:2.147483648e+09"},
		{"DoubleMillionTagged", edm.NewDouble(3e6), "@S:3e+06"},
		{"DoubleLargeIntegral", edm.NewDouble(1e20), "N:1e+20"},
		{"DoubleSmallestN", edm.NewDouble(1e-130), "N:1e-130"},
		{"DoubleLargestN", edm.NewDouble(9.99e125), "N:9.99e+125"},
		{"DoubleBelowN", edm.NewDouble(9.99e-131), "@S:9.99e-131"},
		{"DoubleAboveN", edm.NewDouble(1e126), "@S:1e+126"},
		{"DoubleNegativeZero", edm.NewDouble(math.Copysign(0, -1)), "@S:-0"},
		{"DoubleNaN", edm.NewDouble(math.NaN()), "@S:NaN"},
		{"DoubleInf", edm.NewDouble(math.Inf(1)), "@S:Infinity"},
		{"DoubleMinusInf", edm.NewDouble(math.Inf(-1)), "@S:-Infinity"},
		{"DoubleSmallestDenormal", edm.NewDouble(5e-324), "@S:5e-324"},
		{"DoubleMax", edm.NewDouble(math.MaxFloat64), "@S:1.7976931348623157e+308"},
		{"DoubleMinusMax", edm.NewDouble(-math.MaxFloat64), "@S:-1.7976931348623157e+308"},
		{"DateTime", edm.NewDateTime(dt), "@S:2024-02-29T12:34:56.1234567Z"},
		{"DateTimeMin", edm.NewDateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)), "@S:1601-01-01T00:00:00.0000000Z"},
		{"DateTimeMax", edm.NewDateTime(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)), "@S:9999-12-31T23:59:59.9999999Z"},
		{"Guid", edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"), "@S:c9da6455-213d-42c9-9a79-3e9149a57833"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			av, typed, err := encodeValue(c.value)
			if err != nil {
				t.Fatalf("encodeValue: %v", err)
			}
			if got := storedForm(av, typed); got != c.want {
				t.Errorf("stored as %s; want %s", got, c.want)
			}
			attr := propertyAttr("P", typed)
			name, back, err := decodeProperty(attr, av)
			if err != nil {
				t.Fatalf("decodeProperty(%q): %v", attr, err)
			}
			if name != "P" {
				t.Errorf("decodeProperty(%q) named it %q; want P", attr, name)
			}
			want := c.value
			if want.Type == edm.Binary && want.Bin == nil {
				want.Bin = []byte{}
			}
			if !back.Equal(want) {
				t.Errorf("round trip gave %+v; want %+v", back, want)
			}
			if back.Type == edm.Binary && back.Bin == nil {
				t.Error("Edm.Binary decoded as nil; want present and empty")
			}
			if back.Type == edm.DateTime && back.Time.Location() != time.UTC {
				t.Errorf("DateTime location %v; want UTC", back.Time.Location())
			}
		})
	}
}

// TestDecodeNormalizedNumbers feeds numbers the way DynamoDB may return them
// (normalized, exponent-free) and checks their Edm type and value.
func TestDecodeNormalizedNumbers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		attr string
		av   types.AttributeValue
		want edm.Value
	}{
		{"Int32", "P", &types.AttributeValueMemberN{Value: "-7"}, edm.NewInt32(-7)},
		{"Int32Min", "P", &types.AttributeValueMemberN{Value: "-2147483648"}, edm.NewInt32(math.MinInt32)},
		{"JustBeyondInt32IsDouble", "P", &types.AttributeValueMemberN{Value: "2147483648"}, edm.NewDouble(2147483648)},
		{"ExpandedExponent", "P", &types.AttributeValueMemberN{Value: "100000000000000000000"}, edm.NewDouble(1e20)},
		{"UpperCaseExponent", "P", &types.AttributeValueMemberN{Value: "1E-130"}, edm.NewDouble(1e-130)},
		{"Fraction", "P", &types.AttributeValueMemberN{Value: "0.30000000000000004"}, edm.NewDouble(math.Nextafter(0.3, 1))},
		{"MillionIsInt32", "P", &types.AttributeValueMemberN{Value: "3000000"}, edm.NewInt32(3000000)},
		{"TypedInt64Zero", "P@", &types.AttributeValueMemberN{Value: "0"}, edm.NewInt64(0)},
		{"TypedInt64Small", "P@", &types.AttributeValueMemberN{Value: "7"}, edm.NewInt64(7)},
		{"TypedDoubleIntegral", "P@", &types.AttributeValueMemberS{Value: "3"}, edm.NewDouble(3)},
		{"TypedGuidUpperCase", "P@", &types.AttributeValueMemberS{Value: "C9DA6455-213D-42C9-9A79-3E9149A57833"}, edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got, err := decodeProperty(c.attr, c.av)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(c.want) {
				t.Errorf("decoded %+v; want %+v", got, c.want)
			}
		})
	}
}

func TestDecodeRejectsForeignValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		attr string
		av   types.AttributeValue
	}{
		{"Null", "P", &types.AttributeValueMemberNULL{Value: true}},
		{"List", "P", &types.AttributeValueMemberL{}},
		{"StringSet", "P", &types.AttributeValueMemberSS{Value: []string{"a"}}},
		{"Map", "P", &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"Edm.Int64": &types.AttributeValueMemberN{Value: "1"}}}},
		{"NumberGarbage", "P", &types.AttributeValueMemberN{Value: "1.2.3"}},
		{"TypedBoolean", "P@", &types.AttributeValueMemberBOOL{Value: true}},
		{"TypedBinary", "P@", &types.AttributeValueMemberB{Value: []byte{1}}},
		{"TypedMap", "P@", &types.AttributeValueMemberM{}},
		{"Int64Fraction", "P@", &types.AttributeValueMemberN{Value: "1.5"}},
		{"Int64Overflow", "P@", &types.AttributeValueMemberN{Value: "9223372036854775808"}},
		{"DoubleGarbage", "P@", &types.AttributeValueMemberS{Value: "nope"}},
		{"DateTimeBadFormat", "P@", &types.AttributeValueMemberS{Value: "2024-01-01T00:00:00.0000000+"}},
		{"DateTimeOutOfRange", "P@", &types.AttributeValueMemberS{Value: "2024-13-01T00:00:00.0000000Z"}},
		{"GuidBadDigit", "P@", &types.AttributeValueMemberS{Value: "c9da6455-213d-42c9-9a79-3e9149a5783g"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, v, err := decodeProperty(c.attr, c.av); err == nil {
				t.Errorf("decodeProperty(%q) = %+v; want an error", c.attr, v)
			}
		})
	}
	if _, _, err := encodeValue(edm.Value{}); err == nil {
		t.Error("encodeValue of the zero Value succeeded; want an error")
	}
}

func TestKeyEncodingKeepsOrder(t *testing.T) {
	t.Parallel()
	// Legal Azure keys in ordinal order, starting with the empty key.
	keys := []string{"", " ", "!", "0", "A", "a", "a ", "a!", "aa", "é", "中文", "😀", "\U0010FFFD"}
	var stored []string
	for _, k := range keys {
		enc := encodeKey(k)
		if enc == "" {
			t.Fatalf("encodeKey(%q) is empty", k)
		}
		if got := decodeKey(enc); got != k {
			t.Errorf("decodeKey(encodeKey(%q)) = %q", k, got)
		}
		// Each key's overflow items and the after-bound sort between the
		// key and the next legal key.
		stored = append(stored, enc, chunkRowKey(enc, 1), chunkRowKey(enc, 9), enc+afterKey)
	}
	if !slices.IsSorted(stored) {
		t.Errorf("stored keys are not in order: %q", stored)
	}
	for _, k := range keys {
		enc := encodeKey(k)
		if main, n := splitRowKey(enc); main != enc || n != 0 {
			t.Errorf("splitRowKey(%q) = %q, %d; want a main item", enc, main, n)
		}
		for i := 1; i <= maxChunks; i++ {
			if main, n := splitRowKey(chunkRowKey(enc, i)); main != enc || n != i {
				t.Errorf("splitRowKey(chunk %d of %q) = %q, %d", i, enc, main, n)
			}
		}
	}
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		key     string
		limit   int
		wantErr string // "" for none
	}{
		{"Empty", "", maxRangeKeyBytes, ""},
		{"AtRangeLimit", strings.Repeat("k", 1024), maxRangeKeyBytes, ""},
		{"OverRangeLimit", strings.Repeat("k", 1025), maxRangeKeyBytes, "key too long"},
		{"ThreeByteCharsOver", strings.Repeat("中", 342), maxRangeKeyBytes, "key too long"}, // 1026 bytes, 342 chars
		{"ThreeByteCharsAt", strings.Repeat("中", 341), maxRangeKeyBytes, ""},
		{"AtHashLimit", strings.Repeat("k", 2048), maxHashKeyBytes, ""},
		{"OverHashLimit", strings.Repeat("k", 2049), maxHashKeyBytes, "key too long"},
		{"ControlCharacter", "a\x01b", maxRangeKeyBytes, "control character"},
		{"Tab", "a\tb", maxRangeKeyBytes, "control character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkKey(c.key, c.limit)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("checkKey = %v; want nil", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("checkKey = %v; want an error about %q", err, c.wantErr)
			}
		})
	}
}

// TestParseStoredTimeAgreesWithTimeParse: what the fast reader of the
// stored time form accepts, time.Parse accepts as the same instant (what it
// refuses goes to time.Parse; the canonical forms must not be refused).
func TestParseStoredTimeAgreesWithTimeParse(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"2024-02-29T12:34:56.1234567Z", "2023-02-29T00:00:00.0000000Z", "2024-04-31T00:00:00.0000000Z",
		"0000-01-01T00:00:00.0000000Z", "9999-12-31T23:59:59.9999999Z", "1601-01-01T00:00:00.0000000Z",
		"2024-00-10T00:00:00.0000000Z", "2024-13-10T00:00:00.0000000Z", "2024-01-00T00:00:00.0000000Z",
		"2024-01-32T00:00:00.0000000Z", "2024-01-01T24:00:00.0000000Z", "2024-01-01T00:60:00.0000000Z",
		"2024-01-01T00:00:60.0000000Z", "2024-01-01T00:00:00.000000Z", "2024-01-01T00:00:00.00000000Z",
		"2024-01-01 00:00:00.0000000Z", "2024-01-01T00:00:00,0000000Z", "2024-01-01T00:00:00.0000000z",
		"+024-01-01T00:00:00.0000000Z", "2024-1-01T00:00:00.00000000Z", "2024-01-01T00:00:00.00000a0Z", "",
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		b := []byte(inputs[rng.IntN(6)])
		b[rng.IntN(len(b))] = "0123456789-:.TZ "[rng.IntN(16)]
		inputs = append(inputs, string(b))
	}
	for _, s := range inputs {
		fast, ok := parseStoredTime(s)
		slow, err := time.Parse(timeLayout, s)
		canonical := err == nil && slow.Format(timeLayout) == s
		if ok && (err != nil || !fast.Equal(slow)) || canonical && !ok {
			t.Errorf("%q: fast %v %v; time.Parse %v %v", s, fast, ok, slow, err)
		}
	}
}
