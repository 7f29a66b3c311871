package edm

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"
)

// Metadata is the OData JSON metadata level a response is written at, chosen
// by the Accept header or $format (application/json;odata=...).
type Metadata uint8

// The three JSON metadata levels.
const (
	NoMetadata Metadata = iota
	MinimalMetadata
	FullMetadata
)

// String returns the media type parameter value, e.g. "minimalmetadata".
func (m Metadata) String() string {
	switch m {
	case NoMetadata:
		return "nometadata"
	case MinimalMetadata:
		return "minimalmetadata"
	case FullMetadata:
		return "fullmetadata"
	}
	return "invalid"
}

// Annotated reports whether a property holding v is written with a
// "Name@odata.type" annotation at the given level:
//   - nometadata never annotates.
//   - minimalmetadata and fullmetadata annotate what a reader could not
//     tell from the JSON:
//     Edm.Int64 (a JSON string), Edm.DateTime, Edm.Guid, Edm.Binary (all
//     strings) and an Edm.Double that is NaN or ±Infinity (also a string).
//
// A finite Edm.Double is not annotated, not even an integral one. The value
// is written with a fraction or an exponent ("1.0", "1e+21"), so it never
// reads back as an Int32. Azure does the same. Azurite writes "1", which is
// the bug to avoid. An annotation would make things worse for Go: aztables'
// EDMEntity decoder has no case for "Edm.Double" and turns an annotated
// Double into nil. The JavaScript SDK reads an unannotated 1.0 as an Int32
// (azure-sdk-for-js#19899), and that happens against Azure too.
func Annotated(v Value, level Metadata) bool {
	switch level {
	case FullMetadata, MinimalMetadata:
		// OData v3 JSON light annotates a primitive only where JSON cannot
		// tell its type: String, Boolean, Int32 (an integer) and a finite
		// Double (always written with a fraction or exponent) are inferred
		// at both levels. The levels differ in the odata.* control members
		// and in the Timestamp system property, which the entity writer
		// annotates at full metadata only ("Payload format for Table
		// service operations").
		switch v.Type {
		case Int64, DateTime, Guid, Binary:
			return true
		case Double:
			return math.IsNaN(v.Float) || math.IsInf(v.Float, 0)
		}
	}
	return false
}

// AppendProperty appends one property as JSON object members, without a
// leading or trailing comma: `"name@odata.type":"Edm.Int64","name":"42"`
// when Annotated(v, level), and just `"name":value` otherwise.
func AppendProperty(dst []byte, name string, v Value, level Metadata) []byte {
	if Annotated(v, level) {
		dst = append(dst, '"')
		dst = appendStringContent(dst, name)
		dst = append(dst, `@odata.type":"`...)
		dst = append(dst, v.Type.String()...)
		dst = append(dst, `",`...)
	}
	dst = AppendString(dst, name)
	dst = append(dst, ':')
	return AppendValue(dst, v)
}

// AppendValue appends the JSON form of v: a string for Edm.String, Edm.Guid,
// Edm.DateTime (FormatDateTime), Edm.Binary (standard base64) and Edm.Int64
// (decimal, as OData JSON carries 64-bit integers), a number for Edm.Int32
// and finite Edm.Double, "NaN", "Infinity" or "-Infinity" for the others,
// true or false for Edm.Boolean, and null for the zero Value.
func AppendValue(dst []byte, v Value) []byte {
	switch v.Type {
	case String, Guid:
		return AppendString(dst, v.Str)
	case Binary:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Bin)
		return append(dst, '"')
	case Boolean:
		return strconv.AppendBool(dst, v.Bool)
	case Int32:
		return strconv.AppendInt(dst, v.Int, 10)
	case Int64:
		dst = append(dst, '"')
		dst = strconv.AppendInt(dst, v.Int, 10)
		return append(dst, '"')
	case Double:
		return appendDouble(dst, v.Float)
	case DateTime:
		dst = append(dst, '"')
		dst = AppendDateTime(dst, v.Time)
		return append(dst, '"')
	}
	return append(dst, "null"...)
}

// appendDouble writes the shortest decimal that reads back as exactly f, in
// a form no reader takes for an integer: there is always a fraction or an
// exponent, so 1 is "1.0" and -0 is "-0.0".
func appendDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, 'g', -1, 64)
	for _, c := range dst[start:] {
		if c == '.' || c == 'e' {
			return dst
		}
	}
	return append(dst, ".0"...)
}

// AppendString appends s as a JSON string. Quotes, backslashes and control
// characters are escaped. Everything else is copied as UTF-8, and invalid
// UTF-8 becomes U+FFFD. Plain ASCII takes a fast path.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendStringContent(dst, s)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

func appendStringContent(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	return append(dst, s[start:]...)
}
