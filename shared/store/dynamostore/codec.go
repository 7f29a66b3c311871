package dynamostore

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/edm"
)

// Attribute names of an entity item. PartitionKey, RowKey and Timestamp are
// Azure's own system properties, which can never be custom properties. The
// others start with '$', which cannot start (or appear in) a C# identifier,
// so no legal property name collides with them; decodeItems also treats every
// '$' name as system.
const (
	attrPartitionKey = "PartitionKey"
	attrRowKey       = "RowKey"
	attrTimestamp    = "Timestamp"
	// attrCount bounds the number of properties of a single-item entity
	// from above: exact after an insert or replace, and raised by the
	// number of properties each merge sends (whether or not they were
	// new). It lets a merge check Azure's 252-property limit in its
	// condition without reading the item first; when the bound is too
	// high, the merge is redone exactly (see write.go), which resets it.
	// Absent means no properties.
	attrCount = "$n"
	// attrChunks is the number of overflow items of an entity larger than
	// one DynamoDB item, on its main item.
	attrChunks = "$chunks"
	// attrGen identifies one version of a chunked entity; the main item and
	// its overflow items carry the same value, so a reader can tell a torn
	// read from a whole one.
	attrGen = "$gen"
)

// isSystemAttr reports whether an item attribute is not a custom property.
func isSystemAttr(name string) bool {
	return name == attrPartitionKey || name == attrRowKey || name == attrTimestamp || strings.HasPrefix(name, "$")
}

// Keys. DynamoDB rejects empty key strings, but Azure allows an empty
// PartitionKey and RowKey. Azure forbids control characters (U+0000-U+001F)
// in keys, so the empty key is stored as "\x01": it sorts before every legal
// non-empty key (which starts at U+0020 or above) exactly as "" does, and
// every other key is stored unchanged, readable in any AWS tool.
//
// An overflow item of a large entity has the RowKey of its main item followed
// by "\x01" and its number ('1'...'9'). It sorts right after the main item
// and before any legal key that follows it, so a range read meets an entity's
// overflow items right after it.
const (
	emptyKey  = "\x01"
	chunkMark = '\x01'
	// afterKey is appended to a stored key to make a bound that lies after
	// the key and its overflow items but before any legal larger key.
	afterKey = "\x02"
)

// Key byte limits of DynamoDB (UTF-8): 2048 for a partition key, 1024 for a
// sort key. Azure allows 1 KiB characters, which can take up to 3 KiB.
const (
	maxHashKeyBytes  = 2048
	maxRangeKeyBytes = 1024
)

func encodeKey(k string) string {
	if k == "" {
		return emptyKey
	}
	return k
}

func decodeKey(s string) string {
	if s == emptyKey {
		return ""
	}
	return s
}

// chunkRowKey is the stored RowKey of overflow item i (1-based) of the entity
// whose stored RowKey is rk.
func chunkRowKey(rk string, i int) string {
	return rk + string(rune(chunkMark)) + string(rune('0'+i))
}

// splitRowKey splits a stored RowKey into the stored RowKey of its entity and
// the overflow item number, 0 for a main item.
func splitRowKey(s string) (string, int) {
	n := len(s)
	if n >= 2 && s[n-2] == chunkMark && s[n-1] >= '1' && s[n-1] <= '9' {
		return s[:n-2], int(s[n-1] - '0')
	}
	return s, 0
}

// checkKey rejects a key that this store cannot hold: longer than limit
// bytes once stored (store.ErrKeyTooLong), or holding a control character,
// which Azure forbids and the key encoding relies on.
func checkKey(k string, limit int) error {
	if len(encodeKey(k)) > limit {
		return errKeyTooLong(len(k), limit)
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 {
			return fmt.Errorf("dynamostore: key %q holds a control character, which Azure forbids", k)
		}
	}
	return nil
}

// Values. Every Edm value takes the most natural DynamoDB type that keeps it
// exact, so items stay readable in the AWS console:
//
//	Edm.String   S
//	Edm.Boolean  BOOL
//	Edm.Binary   B
//	Edm.Int32    N
//	Edm.Double   N, when DynamoDB's N holds it exactly and it cannot be
//	             mistaken for an Int32 (it is not an integer in Int32 range)
//
// The values whose DynamoDB type alone does not tell their Edm type are
// stored under the property name followed by typedSuffix ("@", which no C#
// identifier, Azure's rule for property names, can contain), still as
// native attributes:
//
//	Edm.Int64    "Name@" N
//	Edm.DateTime "Name@" S, ISO 8601 with 7 fractional digits (28 bytes,
//	             'T' at offset 10)
//	Edm.Guid     "Name@" S, canonical 8-4-4-4-12 (36 bytes)
//	Edm.Double   "Name@" S for integral values in Int32 range and the values
//	             N cannot hold (NaN, Infinity, -Infinity, -0, magnitudes
//	             outside 1E-130..9.99E+125), as Go's shortest round-trip
//	             form (strconv 'g', -1), which ParseFloat reads back bit for
//	             bit
//
// Under "@", N is an Int64 and an S is told apart by its form: the
// DateTime and Guid forms are fixed, and neither can be read as a double.
// Keeping the type in the attribute name costs no extra attribute (a type
// map or a tag attribute per property makes every read and write of the
// item dearer, in bytes and in DynamoDB's own work), and a merge still only
// touches the properties it sends: it SETs one name and REMOVEs the other.
const typedSuffix = "@"

// propertyAttr is the attribute a property's value is stored under.
func propertyAttr(name string, typed bool) string {
	if typed {
		return name + typedSuffix
	}
	return name
}

// timeLayout is the stored form of Timestamp and Edm.DateTime: fixed width,
// 100 ns precision, UTC. Fixed width makes string equality exact, which the
// If-Match conditions rely on.
const timeLayout = "2006-01-02T15:04:05.0000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	if t, ok := parseStoredTime(s); ok {
		return t, nil
	}
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("dynamostore: stored time %q: %w", s, err)
	}
	return t, nil
}

// parseStoredTime reads timeLayout directly: every entity read parses its
// Timestamp, and time.Parse interprets a general layout. Anything it does not accept goes to time.Parse, which gives
// the error (a test checks that both agree).
func parseStoredTime(s string) (time.Time, bool) {
	if len(s) != len(timeLayout) || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != '.' || s[27] != 'Z' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for i := from; i < to; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	second, ok6 := num(17, 19)
	frac, ok7 := num(20, 27)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, frac*100, time.UTC)
	if t.Day() != day { // past the end of its month: time.Date normalized it
		return time.Time{}, false
	}
	return t, true
}

// DynamoDB numbers: up to 38 significant digits, magnitudes from 1E-130 to
// 9.9999999999999999999999999999999999999E+125, and zero.
const (
	minNumberMagnitude = 1e-130
	maxNumberMagnitude = 1e126 // exclusive
)

// doubleAsNumber returns the N form of f when DynamoDB stores it exactly.
// Go's shortest round-trip form has at most 17 significant digits.
func doubleAsNumber(f float64) (string, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) || math.Signbit(f) && f == 0 {
		return "", false
	}
	if a := math.Abs(f); f != 0 && (a < minNumberMagnitude || a >= maxNumberMagnitude) {
		return "", false
	}
	return strconv.FormatFloat(f, 'g', -1, 64), true
}

// doubleAsString is the S form of a double N cannot hold.
func doubleAsString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return strconv.FormatFloat(f, 'g', -1, 64) // "-0", "5e-324", ...
}

func parseDoubleString(s string) (float64, error) {
	switch s {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(s, 64)
}

// isInt32Valued reports whether a double would read back as an Int32 if it
// were stored as an N under its plain name: an integer in Int32 range, in whatever
// decimal form DynamoDB returns it.
func isInt32Valued(f float64) bool {
	return f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32
}

// encodeValue maps an Edm value to its attribute value; typed reports that
// it is stored under the typed name (see propertyAttr).
func encodeValue(v edm.Value) (av types.AttributeValue, typed bool, err error) {
	switch v.Type {
	case edm.String:
		return &types.AttributeValueMemberS{Value: v.Str}, false, nil
	case edm.Boolean:
		return &types.AttributeValueMemberBOOL{Value: v.Bool}, false, nil
	case edm.Binary:
		b := v.Bin
		if b == nil {
			b = []byte{}
		}
		return &types.AttributeValueMemberB{Value: b}, false, nil
	case edm.Int32:
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v.Int, 10)}, false, nil
	case edm.Int64:
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v.Int, 10)}, true, nil
	case edm.Double:
		// Judged by value, not by our text: DynamoDB normalizes numbers
		// and returns 3e+06 as 3000000, which would read as an Int32.
		if n, ok := doubleAsNumber(v.Float); ok && !isInt32Valued(v.Float) {
			return &types.AttributeValueMemberN{Value: n}, false, nil
		}
		return &types.AttributeValueMemberS{Value: doubleAsString(v.Float)}, true, nil
	case edm.DateTime:
		return &types.AttributeValueMemberS{Value: formatTime(v.Time)}, true, nil
	case edm.Guid:
		return &types.AttributeValueMemberS{Value: v.Str}, true, nil
	}
	return nil, false, fmt.Errorf("dynamostore: cannot store a value of type %s", v.Type)
}

var errCorrupt = errors.New("dynamostore: stored item is not a tablebridge entity")

// decodeProperty maps a stored attribute back to its property name and Edm
// value.
func decodeProperty(attr string, av types.AttributeValue) (string, edm.Value, error) {
	if name, ok := strings.CutSuffix(attr, typedSuffix); ok {
		v, err := decodeTyped(av)
		return name, v, err
	}
	v, err := decodeValue(av)
	return attr, v, err
}

// decodeValue maps a stored attribute value under a plain name back to its
// Edm value.
func decodeValue(av types.AttributeValue) (edm.Value, error) {
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		return decodeString(false, a.Value)
	case *types.AttributeValueMemberN:
		return decodeNumber(false, a.Value)
	case *types.AttributeValueMemberBOOL:
		return edm.NewBoolean(a.Value), nil
	case *types.AttributeValueMemberB:
		return decodeBinary(a.Value), nil
	}
	return edm.Value{}, fmt.Errorf("%w: unexpected attribute value %T", errCorrupt, av)
}

// decodeTyped maps a value stored under a typed name back to its Edm value.
func decodeTyped(av types.AttributeValue) (edm.Value, error) {
	switch a := av.(type) {
	case *types.AttributeValueMemberN:
		return decodeNumber(true, a.Value)
	case *types.AttributeValueMemberS:
		return decodeString(true, a.Value)
	}
	return edm.Value{}, fmt.Errorf("%w: unexpected typed attribute value %T", errCorrupt, av)
}

// The scalar decoders below serve both the SDK's attribute values and the
// page decoder that reads entities straight from the response (pagejson.go).

// decodeString decodes an S value: a String under a plain name; under a
// typed name a DateTime, a Guid or a Double, told apart by form.
func decodeString(typed bool, s string) (edm.Value, error) {
	switch {
	case !typed:
		return edm.NewString(s), nil
	case len(s) == len(timeLayout) && s[10] == 'T':
		t, err := parseTime(s)
		if err != nil {
			return edm.Value{}, fmt.Errorf("%w: %v", errCorrupt, err)
		}
		return edm.Value{Type: edm.DateTime, Time: t}, nil
	case len(s) == 36:
		g, ok := edm.ParseGuid(s)
		if !ok {
			return edm.Value{}, fmt.Errorf("%w: Guid %q", errCorrupt, s)
		}
		return edm.NewGuid(g), nil
	}
	f, err := parseDoubleString(s)
	if err != nil {
		return edm.Value{}, fmt.Errorf("%w: Double %q: %v", errCorrupt, s, err)
	}
	return edm.NewDouble(f), nil
}

// decodeNumber decodes an N value: an Int32, or else a Double, under a
// plain name; an Int64 under a typed name.
func decodeNumber(typed bool, n string) (edm.Value, error) {
	if typed {
		i, err := strconv.ParseInt(n, 10, 64)
		if err != nil {
			return edm.Value{}, fmt.Errorf("%w: Int64 %q: %v", errCorrupt, n, err)
		}
		return edm.NewInt64(i), nil
	}
	if i, err := strconv.ParseInt(n, 10, 32); err == nil {
		return edm.Value{Type: edm.Int32, Int: i}, nil
	}
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return edm.Value{}, fmt.Errorf("%w: number %q: %v", errCorrupt, n, err)
	}
	return edm.NewDouble(f), nil
}

func decodeBinary(b []byte) edm.Value {
	if b == nil {
		b = []byte{} // present but empty, not absent
	}
	return edm.NewBinary(b)
}
