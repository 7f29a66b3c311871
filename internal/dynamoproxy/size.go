package dynamoproxy

import (
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"
)

// Item sizes by DynamoDB's rules ("DynamoDB item sizes and formats",
// CapacityUnitCalculations in the Developer Guide): an attribute is the
// UTF-8 length of its name plus its value; a string its UTF-8 length, a
// number one byte per two significant digits plus one, a binary its raw
// length, a null or Boolean one byte, a list or map 3 bytes plus its
// elements plus one byte per element. Sets are the sum of their elements.
//
// The proxy takes capacity units from DynamoDB Local's own ConsumedCapacity
// (see account.go); these sizes only weigh the items of one request against
// each other, and price the failed conditional writes DynamoDB Local does
// not report.

func itemSize(it attrs) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v json.RawMessage) int {
	var av map[string]json.RawMessage
	if json.Unmarshal(v, &av) != nil {
		return 0
	}
	n := 0
	for typ, raw := range av {
		switch typ {
		case "S":
			var s string
			_ = json.Unmarshal(raw, &s)
			n += len(s)
		case "N":
			var s string
			_ = json.Unmarshal(raw, &s)
			n += numberSize(s)
		case "B":
			var s string
			_ = json.Unmarshal(raw, &s)
			n += decodedLen(s)
		case "BOOL", "NULL":
			n++
		case "SS", "NS", "BS":
			var ss []string
			_ = json.Unmarshal(raw, &ss)
			for _, s := range ss {
				switch typ {
				case "SS":
					n += len(s)
				case "NS":
					n += numberSize(s)
				default:
					n += decodedLen(s)
				}
			}
		case "L":
			var l []json.RawMessage
			_ = json.Unmarshal(raw, &l)
			n += 3
			for _, e := range l {
				n += valueSize(e) + 1
			}
		case "M":
			var m attrs
			_ = json.Unmarshal(raw, &m)
			n += 3
			for name, e := range m {
				n += len(name) + valueSize(e) + 1
			}
		}
	}
	return n
}

// numberSize: one byte per two significant digits, plus one. Leading and
// trailing zeros are not significant, nor are the sign, the point and the
// exponent.
func numberSize(s string) int {
	mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, mantissa)
	digits = strings.Trim(digits, "0")
	return (utf8.RuneCountInString(digits)+1)/2 + 1
}

// writeUnitsOf is what a write of an item of size bytes costs: one unit per
// KB, rounded up, at least one ("Capacity unit consumption for write
// operations" in the Developer Guide).
func writeUnitsOf(size int) float64 {
	return math.Max(1, math.Ceil(float64(size)/1024))
}

// readUnitsOf is what a strongly consistent read of size bytes costs: one
// unit per 4 KB, rounded up, at least one.
func readUnitsOf(size int) float64 {
	return math.Max(1, math.Ceil(float64(size)/4096))
}
