package edm

import (
	"encoding/base64"
	"math"
	"strconv"
)

// value converts a property member to its typed value.
func (d *decoder) value(m *member, name string) (Value, bool, error) {
	var typ Type
	if m.annotation >= 0 {
		typ = d.members[m.annotation].annotated
	}
	if m.kind == kindNull {
		return Value{Type: typ}, true, nil
	}
	if typ == 0 {
		return d.inferred(m, name)
	}
	switch typ {
	case String:
		if m.kind == kindString {
			return NewString(d.str(m)), false, nil
		}
	case Boolean:
		switch m.kind {
		case kindTrue, kindFalse:
			return NewBoolean(m.kind == kindTrue), false, nil
		case kindString:
			// An annotated value may travel as a JSON string, as every
			// Int64 does and as Azure Storage Explorer sends every typed
			// value ("b":"false","b@odata.type":"Edm.Boolean"); the
			// service parses it as the annotated type: a case-insensitive
			// true or false.
			if b, ok := parseBoolean(d.stringBytes(m)); ok {
				return NewBoolean(b), false, nil
			}
		}
	case Int32:
		if n, ok := d.integer(m, 32); ok {
			return Value{Type: Int32, Int: n}, false, nil
		}
	case Int64:
		if n, ok := d.integer(m, 64); ok {
			return Value{Type: Int64, Int: n}, false, nil
		}
	case Double:
		f, kind := d.double(m)
		if kind == 0 {
			return NewDouble(f), false, nil
		}
		return Value{}, false, d.badValue(m, name, typ, kind)
	case DateTime:
		if m.kind == kindString {
			t, kind := parseDateTime(d.stringBytes(m))
			if kind == 0 {
				return Value{Type: DateTime, Time: t}, false, nil
			}
			return Value{}, false, d.badValue(m, name, typ, kind)
		}
	case Guid:
		if m.kind == kindString && m.strReady {
			return NewGuid(d.str(m)), false, nil
		}
	case Binary:
		if m.kind == kindString {
			src := d.stringBytes(m)
			buf := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
			n, err := base64.StdEncoding.Decode(buf, src)
			if err == nil {
				return NewBinary(buf[:n]), false, nil
			}
		}
	}
	return Value{}, false, d.badValue(m, name, typ, ErrBadValue)
}

// inferred types an unannotated value the way the Table service does.
func (d *decoder) inferred(m *member, name string) (Value, bool, error) {
	switch m.kind {
	case kindString:
		return NewString(d.str(m)), false, nil
	case kindTrue, kindFalse:
		return NewBoolean(m.kind == kindTrue), false, nil
	}
	raw := d.data[m.valStart:m.valEnd]
	if m.integral {
		if n, ok := parseInteger(raw, 32); ok {
			return Value{Type: Int32, Int: n}, false, nil
		}
	}
	f, kind := parseFloat(raw)
	if kind != 0 {
		return Value{}, false, d.badValue(m, name, Double, kind)
	}
	return NewDouble(f), false, nil
}

// parseBoolean reads "true" or "false" in any case.
func parseBoolean(b []byte) (value, ok bool) {
	switch {
	case len(b) == 4 && b[0]|0x20 == 't' && b[1]|0x20 == 'r' && b[2]|0x20 == 'u' && b[3]|0x20 == 'e':
		return true, true
	case len(b) == 5 && b[0]|0x20 == 'f' && b[1]|0x20 == 'a' && b[2]|0x20 == 'l' && b[3]|0x20 == 's' && b[4]|0x20 == 'e':
		return false, true
	}
	return false, false
}

// integer reads an Edm.Int32 or Edm.Int64: an integral JSON number or a
// string holding one (Edm.Int64 travels as a string).
func (d *decoder) integer(m *member, bits int) (int64, bool) {
	switch m.kind {
	case kindNumber:
		if !m.integral {
			return 0, false
		}
		return parseInteger(d.data[m.valStart:m.valEnd], bits)
	case kindString:
		return parseInteger(d.stringBytes(m), bits)
	}
	return 0, false
}

// parseInteger parses an optionally signed run of decimal digits that fits
// in a signed integer of the given size.
func parseInteger(b []byte, bits int) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg, b = true, b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	limit := uint64(1)<<(bits-1) - 1 // max magnitude of a positive value
	if neg {
		limit++
	}
	var n uint64
	if len(b) <= 18 {
		// 18 digits cannot overflow the accumulator (10^18 < 2^63), so
		// the range is checked once instead of with a division per digit.
		for _, c := range b {
			d := c - '0'
			if d > 9 {
				return 0, false
			}
			n = n*10 + uint64(d)
		}
		if n > limit {
			return 0, false
		}
	} else {
		for _, c := range b {
			if c < '0' || c > '9' {
				return 0, false
			}
			if n > (limit-uint64(c-'0'))/10 {
				return 0, false
			}
			n = n*10 + uint64(c-'0')
		}
	}
	if neg {
		return -int64(n), true // n == 1<<63 wraps to MinInt64, as intended
	}
	return int64(n), true
}

// double reads an Edm.Double: a JSON number, or a string holding "NaN",
// "Infinity", "-Infinity" (Azure's spelling), "INF", "-INF" (OData v4's) or
// a JSON number.
func (d *decoder) double(m *member) (float64, ErrorKind) {
	switch m.kind {
	case kindNumber:
		return parseFloat(d.data[m.valStart:m.valEnd])
	case kindString:
		s := d.stringBytes(m)
		switch string(s) {
		case "NaN":
			return math.NaN(), 0
		case "Infinity", "INF":
			return math.Inf(1), 0
		case "-Infinity", "-INF":
			return math.Inf(-1), 0
		}
		if end, _, ok := scanNumber(s, 0); !ok || end != len(s) {
			return 0, ErrBadValue
		}
		return parseFloat(s)
	}
	return 0, ErrBadValue
}

// parseFloat parses a JSON number exactly (strconv rounds correctly, so
// 5E-324 and 1.7976931348623157E308 survive, and -0 keeps its sign). A
// number too large for a Double is out of range. One too small rounds to a
// zero of its sign, as in .NET.
func parseFloat(b []byte) (float64, ErrorKind) {
	f, err := strconv.ParseFloat(string(b), 64)
	switch {
	case err == nil:
		return f, 0
	case math.IsInf(f, 0):
		return 0, ErrOutOfRange
	}
	return 0, ErrBadValue
}

func (d *decoder) badValue(m *member, name string, typ Type, kind ErrorKind) error {
	msg := "invalid " + typ.String() + " value "
	if kind == ErrOutOfRange {
		msg = typ.String() + " value out of range: "
	}
	raw := d.data[m.valStart:m.valEnd]
	if m.kind == kindString {
		raw = d.stringBytes(m)
	}
	return &Error{Kind: kind, Property: name, Offset: m.valStart, Msg: msg + quoteForMsg(string(raw))}
}
