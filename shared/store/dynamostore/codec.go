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
	// attrNames is the string set of the entity's property names on a
	// single-item entity. It lets a merge check Azure's 252-property limit
	// in its condition without reading the item first.
	attrNames = "$names"
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
// The types DynamoDB cannot tell apart carry their Edm name, as the OData
// wire format does with "@odata.type": a map of one entry from the Edm type
// name to the value.
//
//	Edm.Int64    {"Edm.Int64": N}
//	Edm.Double   {"Edm.Double": N} for integral values in Int32 range,
//	             {"Edm.Double": S} for the values N cannot hold: NaN,
//	             Infinity, -Infinity, -0 and magnitudes outside
//	             1E-130..9.99E+125, written as Go's shortest round-trip form
//	             (strconv 'g', -1), which ParseFloat reads back bit for bit
//	Edm.DateTime {"Edm.DateTime": S}, ISO 8601 with 7 fractional digits
//	Edm.Guid     {"Edm.Guid": S}
//
// Keeping the type next to the value (rather than in a per-item type map)
// means a merge only ever SETs the properties it sends.

// Names of the tagged types, as the wire spells them.
var (
	tagInt64    = edm.Int64.String()
	tagDouble   = edm.Double.String()
	tagDateTime = edm.DateTime.String()
	tagGuid     = edm.Guid.String()
)

// timeLayout is the stored form of Timestamp and Edm.DateTime: fixed width,
// 100 ns precision, UTC. Fixed width makes string equality exact, which the
// If-Match conditions rely on.
const timeLayout = "2006-01-02T15:04:05.0000000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("dynamostore: stored time %q: %w", s, err)
	}
	return t, nil
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
// were stored as an untagged N: an integer in Int32 range, in whatever
// decimal form DynamoDB returns it.
func isInt32Valued(f float64) bool {
	return f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32
}

// looksInt32 reports whether an untagged N reads as an Int32.
func looksInt32(n string) bool {
	_, err := strconv.ParseInt(n, 10, 32)
	return err == nil
}

func tagged(tag string, v types.AttributeValue) types.AttributeValue {
	return &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{tag: v}}
}

// encodeValue maps an Edm value to its attribute value.
func encodeValue(v edm.Value) (types.AttributeValue, error) {
	switch v.Type {
	case edm.String:
		return &types.AttributeValueMemberS{Value: v.Str}, nil
	case edm.Boolean:
		return &types.AttributeValueMemberBOOL{Value: v.Bool}, nil
	case edm.Binary:
		b := v.Bin
		if b == nil {
			b = []byte{}
		}
		return &types.AttributeValueMemberB{Value: b}, nil
	case edm.Int32:
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(v.Int, 10)}, nil
	case edm.Int64:
		return tagged(tagInt64, &types.AttributeValueMemberN{Value: strconv.FormatInt(v.Int, 10)}), nil
	case edm.Double:
		n, ok := doubleAsNumber(v.Float)
		switch {
		case !ok:
			return tagged(tagDouble, &types.AttributeValueMemberS{Value: doubleAsString(v.Float)}), nil
		case isInt32Valued(v.Float):
			// Judged by value, not by our text: DynamoDB normalizes numbers
			// and returns 3e+06 as 3000000.
			return tagged(tagDouble, &types.AttributeValueMemberN{Value: n}), nil
		}
		return &types.AttributeValueMemberN{Value: n}, nil
	case edm.DateTime:
		return tagged(tagDateTime, &types.AttributeValueMemberS{Value: formatTime(v.Time)}), nil
	case edm.Guid:
		return tagged(tagGuid, &types.AttributeValueMemberS{Value: v.Str}), nil
	}
	return nil, fmt.Errorf("dynamostore: cannot store a value of type %s", v.Type)
}

var errCorrupt = errors.New("dynamostore: stored item is not a tablebridge entity")

// decodeValue maps a stored attribute value back to its Edm value.
func decodeValue(av types.AttributeValue) (edm.Value, error) {
	switch a := av.(type) {
	case *types.AttributeValueMemberS:
		return edm.NewString(a.Value), nil
	case *types.AttributeValueMemberBOOL:
		return edm.NewBoolean(a.Value), nil
	case *types.AttributeValueMemberB:
		b := a.Value
		if b == nil {
			b = []byte{} // present but empty, not absent
		}
		return edm.NewBinary(b), nil
	case *types.AttributeValueMemberN:
		if looksInt32(a.Value) {
			i, _ := strconv.ParseInt(a.Value, 10, 32)
			return edm.Value{Type: edm.Int32, Int: i}, nil
		}
		f, err := strconv.ParseFloat(a.Value, 64)
		if err != nil {
			return edm.Value{}, fmt.Errorf("%w: number %q: %v", errCorrupt, a.Value, err)
		}
		return edm.NewDouble(f), nil
	case *types.AttributeValueMemberM:
		if len(a.Value) == 1 {
			for tag, inner := range a.Value {
				return decodeTagged(tag, inner)
			}
		}
	}
	return edm.Value{}, fmt.Errorf("%w: unexpected attribute value %T", errCorrupt, av)
}

func decodeTagged(tag string, inner types.AttributeValue) (edm.Value, error) {
	switch tag {
	case tagInt64:
		if n, ok := inner.(*types.AttributeValueMemberN); ok {
			i, err := strconv.ParseInt(n.Value, 10, 64)
			if err == nil {
				return edm.NewInt64(i), nil
			}
		}
	case tagDouble:
		switch x := inner.(type) {
		case *types.AttributeValueMemberN:
			if f, err := strconv.ParseFloat(x.Value, 64); err == nil {
				return edm.NewDouble(f), nil
			}
		case *types.AttributeValueMemberS:
			if f, err := parseDoubleString(x.Value); err == nil {
				return edm.NewDouble(f), nil
			}
		}
	case tagDateTime:
		if s, ok := inner.(*types.AttributeValueMemberS); ok {
			if t, err := parseTime(s.Value); err == nil {
				return edm.Value{Type: edm.DateTime, Time: t}, nil
			}
		}
	case tagGuid:
		if s, ok := inner.(*types.AttributeValueMemberS); ok {
			return edm.NewGuid(s.Value), nil
		}
	}
	return edm.Value{}, fmt.Errorf("%w: bad %q value %T", errCorrupt, tag, inner)
}
