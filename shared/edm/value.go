package edm

import (
	"bytes"
	"math"
	"time"
)

// Type is one of the eight Edm types. The zero Type is invalid.
type Type uint8

// The Edm types, spelled as the wire spells them by Type.String.
const (
	Binary Type = iota + 1
	Boolean
	DateTime
	Double
	Guid
	Int32
	Int64
	String
)

var typeNames = [...]string{
	Binary:   "Edm.Binary",
	Boolean:  "Edm.Boolean",
	DateTime: "Edm.DateTime",
	Double:   "Edm.Double",
	Guid:     "Edm.Guid",
	Int32:    "Edm.Int32",
	Int64:    "Edm.Int64",
	String:   "Edm.String",
}

// String returns the wire name, e.g. "Edm.Int64".
func (t Type) String() string {
	if t == 0 || int(t) >= len(typeNames) {
		return "Edm.Invalid"
	}
	return typeNames[t]
}

// ParseType maps a wire name such as "Edm.Int64" to its Type.
func ParseType(name string) (Type, bool) {
	for t := Binary; t <= String; t++ {
		if typeNames[t] == name {
			return t, true
		}
	}
	return 0, false
}

// Value is one typed property value. Exactly the field that belongs to Type is
// meaningful:
//
//	String        Str
//	Guid          Str, canonical lower-case 8-4-4-4-12 form
//	Binary        Bin
//	Boolean       Bool
//	Int32, Int64  Int
//	Double        Float (NaN, ±Inf and -0 included)
//	DateTime      Time, UTC, truncated to 100 ns ticks
type Value struct {
	Type  Type
	Str   string
	Bin   []byte
	Bool  bool
	Int   int64
	Float float64
	Time  time.Time
}

// NewString returns an Edm.String value.
func NewString(s string) Value { return Value{Type: String, Str: s} }

// NewBinary returns an Edm.Binary value.
func NewBinary(b []byte) Value { return Value{Type: Binary, Bin: b} }

// NewBoolean returns an Edm.Boolean value.
func NewBoolean(b bool) Value { return Value{Type: Boolean, Bool: b} }

// NewInt32 returns an Edm.Int32 value.
func NewInt32(i int32) Value { return Value{Type: Int32, Int: int64(i)} }

// NewInt64 returns an Edm.Int64 value.
func NewInt64(i int64) Value { return Value{Type: Int64, Int: i} }

// NewDouble returns an Edm.Double value.
func NewDouble(f float64) Value { return Value{Type: Double, Float: f} }

// NewDateTime returns an Edm.DateTime value in UTC, truncated to 100 ns.
func NewDateTime(t time.Time) Value {
	return Value{Type: DateTime, Time: t.UTC().Truncate(100 * time.Nanosecond)}
}

// NewGuid returns an Edm.Guid value; s must already be canonical (see ParseGuid).
func NewGuid(s string) Value { return Value{Type: Guid, Str: s} }

// Equal reports whether two values have the same type and the bit-identical
// value. Unlike $filter comparison, NaN equals NaN and -0 differs from +0:
// it answers "did this value round-trip exactly".
func (v Value) Equal(o Value) bool {
	if v.Type != o.Type {
		return false
	}
	switch v.Type {
	case String, Guid:
		return v.Str == o.Str
	case Binary:
		return bytes.Equal(v.Bin, o.Bin)
	case Boolean:
		return v.Bool == o.Bool
	case Int32, Int64:
		return v.Int == o.Int
	case Double:
		return math.Float64bits(v.Float) == math.Float64bits(o.Float)
	case DateTime:
		return v.Time.Equal(o.Time)
	}
	return false
}
