package edm

import (
	"bytes"
	"math"
	"testing"
	"time"
)

// edgeValues are the values every layer must carry bit for bit.
func edgeValues() map[string]Value {
	big := bytes.Repeat([]byte{0xAB}, 64<<10)
	return map[string]Value{
		"StrEmpty":     NewString(""),
		"StrUnicode":   NewString("日本語 café 😀 \U0010FFFF"),
		"StrEscapes":   NewString("\"\\/\b\f\n\r\t\x00\x1f\x7f"),
		"BoolTrue":     NewBoolean(true),
		"BoolFalse":    NewBoolean(false),
		"I32Min":       NewInt32(math.MinInt32),
		"I32Max":       NewInt32(math.MaxInt32),
		"I32Zero":      NewInt32(0),
		"I64Min":       NewInt64(math.MinInt64),
		"I64Max":       NewInt64(math.MaxInt64),
		"I64Small":     NewInt64(1),
		"DblNaN":       NewDouble(math.NaN()),
		"DblPosInf":    NewDouble(math.Inf(1)),
		"DblNegInf":    NewDouble(math.Inf(-1)),
		"DblNegZero":   NewDouble(math.Copysign(0, -1)),
		"DblZero":      NewDouble(0),
		"DblSmallest":  NewDouble(5e-324),
		"DblLargest":   NewDouble(math.MaxFloat64),
		"DblNegMax":    NewDouble(-math.MaxFloat64),
		"DblOne":       NewDouble(1),
		"DblIntegral":  NewDouble(6824053932181),
		"DblBeyondI32": NewDouble(3e9),
		"DblTenth":     NewDouble(0.1),
		"DtMin":        NewDateTime(MinDateTime),
		"DtMax":        NewDateTime(MaxDateTime),
		"DtTick":       NewDateTime(time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)),
		"Guid":         NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"),
		"GuidZero":     NewGuid("00000000-0000-0000-0000-000000000000"),
		"BinEmpty":     NewBinary([]byte{}),
		"BinBytes":     NewBinary([]byte{0, 1, 2, 0xfe, 0xff}),
		"Bin64KiB":     NewBinary(big),
	}
}

func encodeObject(props []prop, level Metadata) []byte {
	out := []byte{'{'}
	for i, pr := range props {
		if i > 0 {
			out = append(out, ',')
		}
		out = AppendProperty(out, pr.Name, pr.Value, level)
	}
	return append(out, '}')
}

func TestRoundTripEveryValue(t *testing.T) {
	t.Parallel()
	for _, level := range []Metadata{MinimalMetadata, FullMetadata} {
		t.Run(level.String(), func(t *testing.T) {
			for name, v := range edgeValues() {
				t.Run(name, func(t *testing.T) {
					in := []prop{{Name: name, Value: v}}
					data := encodeObject(in, level)
					got, err := decodeAll(string(data))
					if err != nil {
						t.Fatalf("decode %s: %v", data, err)
					}
					if !equalProps(got, in) {
						t.Fatalf("round trip of %s\n got %v\nwant %v", data, got, in)
					}
				})
			}
		})
	}
}

// TestRoundTripNoMetadata documents what survives without annotations: the
// types JSON itself can tell apart. Finite doubles stay doubles because
// they are always written with a fraction or an exponent. The rest read
// back as strings, which is what a nometadata client gets from Azure too.
func TestRoundTripNoMetadata(t *testing.T) {
	t.Parallel()
	for name, v := range edgeValues() {
		t.Run(name, func(t *testing.T) {
			data := encodeObject([]prop{{Name: name, Value: v}}, NoMetadata)
			got, err := decodeAll(string(data))
			if err != nil {
				t.Fatalf("decode %s: %v", data, err)
			}
			want := v
			if !(v.Type == String || v.Type == Boolean || v.Type == Int32 ||
				(v.Type == Double && !math.IsNaN(v.Float) && !math.IsInf(v.Float, 0))) {
				// Anything written as a JSON string comes back as that string.
				raw := AppendValue(nil, v)
				want = NewString(string(raw[1 : len(raw)-1]))
			}
			if len(got) != 1 || !got[0].Value.Equal(want) {
				t.Fatalf("nometadata %s read back as %v, want %#v", data, got, want)
			}
		})
	}
}

func TestRoundTripWholeEntity(t *testing.T) {
	t.Parallel()
	var in []prop
	for name, v := range edgeValues() {
		in = append(in, prop{Name: name, Value: v})
	}
	data := encodeObject(in, MinimalMetadata)
	got, err := decodeAll(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if !equalProps(got, in) {
		t.Fatalf("entity round trip differs:\n got %v\nwant %v", got, in)
	}
}
