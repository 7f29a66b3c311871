package edm

import (
	"bytes"
	"math"
	"strings"
)

// Compare orders two values for the $filter comparison operators. It returns
// the sign of a-b as -1, 0 or +1, and ok=false when the pair has no order.
// When ok is false no comparison operator matches, not even ne.
//
// Comparisons are strictly typed. Azure documents that "the constant value
// must be of the same data type as the property in order for the filter to
// return valid results" (Query tables and entities), and the service does not
// widen numbers. An Edm.Int64 property compared with the literal 42, which
// is an Edm.Int32 without the L suffix, does not match. Neither does an
// Edm.Double property compared with an Int32 literal. So any two different
// Edm types give ok=false. A zero Value stands for a missing property, and it
// gives ok=false too, because the $filter of a property an entity lacks
// matches nothing.
//
// Within one type:
//   - String compares ordinally by bytes. For UTF-8 that is code point
//     order. .NET's ordinal order is by UTF-16 code unit, and the two differ
//     only when a supplementary-plane character (U+10000 and up) meets one
//     in U+E000..U+FFFF. Byte order is kept everywhere (the stores sort keys
//     the same way), so filters and key order agree.
//   - Guid compares the canonical lower-case strings. That is the order of
//     .NET's Guid.CompareTo, whose fields compare unsigned in string order.
//   - Binary compares bytewise, with a shorter prefix first.
//   - Boolean orders false before true.
//   - Int32 and Int64 compare as integers.
//   - Double follows IEEE 754. -0 equals +0. NaN is unordered, so any
//     comparison with a NaN gives ok=false. IEEE would make ne true there.
//     $filter treats every unordered pair alike, as no match, and ne is no
//     exception.
//   - DateTime compares instants.
func Compare(a, b Value) (cmp int, ok bool) {
	if a.Type != b.Type || a.Type == 0 {
		return 0, false
	}
	switch a.Type {
	case String, Guid:
		return strings.Compare(a.Str, b.Str), true
	case Binary:
		return bytes.Compare(a.Bin, b.Bin), true
	case Boolean:
		return compareBool(a.Bool, b.Bool), true
	case Int32, Int64:
		return compareInt(a.Int, b.Int), true
	case Double:
		if math.IsNaN(a.Float) || math.IsNaN(b.Float) {
			return 0, false
		}
		switch {
		case a.Float < b.Float:
			return -1, true
		case a.Float > b.Float:
			return 1, true
		}
		return 0, true
	case DateTime:
		return a.Time.Compare(b.Time), true
	}
	return 0, false
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
