package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

func sampleEntity() *model.Entity {
	return entity("pk", "rk", time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC), map[string]edm.Value{
		"S":      edm.NewString("héllo 😀"),
		"Empty":  edm.NewString(""),
		"G":      edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"),
		"B":      edm.NewBinary([]byte{0, 1, 255}),
		"BEmpty": edm.NewBinary([]byte{}),
		"T":      edm.NewBoolean(true),
		"F":      edm.NewBoolean(false),
		"I32":    edm.NewInt32(math.MinInt32),
		"I64":    edm.NewInt64(math.MaxInt64),
		"I64Min": edm.NewInt64(math.MinInt64),
		"NaN":    edm.NewDouble(math.Float64frombits(0x7ff8000000000001)), // payload kept
		"NegInf": edm.NewDouble(math.Inf(-1)),
		"NegZ":   edm.NewDouble(math.Copysign(0, -1)),
		"Denorm": edm.NewDouble(5e-324),
		"Max":    edm.NewDouble(math.MaxFloat64),
		"Min":    edm.NewDateTime(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)),
		"MaxDT":  edm.NewDateTime(time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC)),
		"Before": edm.NewDateTime(time.Date(1969, 12, 31, 23, 59, 59, 100, time.UTC)),
	})
}

func entity(pk, rk string, ts time.Time, p map[string]edm.Value) *model.Entity {
	return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: ts, Properties: p}
}

// decodeWithKeys decodes b and gives it want's keys, which records do not
// hold.
func decodeWithKeys(want *model.Entity, b []byte) (*model.Entity, error) {
	e, err := DecodeEntity(string(b))
	if err != nil {
		return nil, err
	}
	e.PartitionKey, e.RowKey = want.PartitionKey, want.RowKey
	return e, nil
}

func TestEntityCodecRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		e    *model.Entity
	}{
		{"AllTypesAndEdges", sampleEntity()},
		{"NoProperties", entity("", "", time.Unix(0, 0).UTC(), nil)},
		{"ZeroTimestamp", entity("a", "b", time.Time{}, map[string]edm.Value{"X": edm.NewInt32(1)})},
		{"LargeBinary", entity("a", "b", time.Unix(1, 1), map[string]edm.Value{"Big": edm.NewBinary(bytes.Repeat([]byte{7}, 64<<10))})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := EncodeEntity(c.e)
			if err != nil {
				t.Fatal(err)
			}
			if b[0] != entityVersion1 {
				t.Errorf("version byte = %d", b[0])
			}
			got, err := decodeWithKeys(c.e, b)
			if err != nil {
				t.Fatal(err)
			}
			assertSameEntity(t, got, c.e)
			if got.Timestamp != c.e.Timestamp.UTC() && !(got.Timestamp.IsZero() && c.e.Timestamp.IsZero()) {
				t.Errorf("Timestamp %#v is not the UTC time %#v", got.Timestamp, c.e.Timestamp)
			}
			ts, err := DecodeTimestamp(b)
			if err != nil || !ts.Equal(c.e.Timestamp) {
				t.Errorf("decodeTimestamp = %v, %v", ts, err)
			}
			// Properties are written in map order, so the bytes may differ
			// between encodings; what they decode to may not.
			again, _ := EncodeEntity(got)
			if len(again) != len(b) {
				t.Errorf("re-encoding is %d bytes, first encoding %d", len(again), len(b))
			}
			back, err := decodeWithKeys(c.e, again)
			if err != nil {
				t.Fatal(err)
			}
			assertSameEntity(t, back, c.e)
		})
	}
}

func assertSameEntity(t *testing.T, got, want *model.Entity) {
	t.Helper()
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey || !got.Timestamp.Equal(want.Timestamp) {
		t.Fatalf("header = (%q, %q, %v); want (%q, %q, %v)", got.PartitionKey, got.RowKey, got.Timestamp, want.PartitionKey, want.RowKey, want.Timestamp)
	}
	if len(got.Properties) != len(want.Properties) {
		t.Fatalf("%d properties; want %d", len(got.Properties), len(want.Properties))
	}
	for name, w := range want.Properties {
		g, ok := got.Properties[name]
		if !ok || !g.Equal(w) {
			t.Errorf("property %q = %+v; want %+v", name, g, w)
		}
		if w.Type == edm.Binary && g.Bin == nil {
			t.Errorf("property %q: binary came back nil", name)
		}
	}
}

func TestDecodeEntityRejectsDamage(t *testing.T) {
	t.Parallel()
	valid, err := EncodeEntity(sampleEntity())
	if err != nil {
		t.Fatal(err)
	}
	// Every strict prefix of a valid record is damaged.
	for n := range len(valid) {
		if _, err := DecodeEntity(string(valid[:n])); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("prefix of %d bytes: err = %v; want ErrCorrupt", n, err)
		}
	}
	header := []byte{entityVersion1, 0, 0} // Timestamp 0s + 0ns
	prop := func(name string, typ byte, payload ...byte) []byte {
		b := append([]byte(nil), header...)
		b = append(b, 1) // one property
		b = appendString(b, name)
		b = append(b, typ)
		return append(b, payload...)
	}
	cases := []struct {
		name string
		b    []byte
	}{
		{"Empty", nil},
		{"UnknownVersion", []byte{2, 0, 0, 0}},
		{"VersionZero", []byte{0, 0, 0, 0}},
		{"TrailingBytes", append(append([]byte(nil), valid...), 0)},
		{"NanosecondsOutOfRange", append([]byte{entityVersion1, 0}, append(binary.AppendUvarint(nil, uint64(time.Second)), 0)...)},
		{"CountBeyondRecord", append(append([]byte(nil), header...), 0xff, 0xff, 0x03)},
		{"InvalidType", prop("X", 0)},
		{"TypeBeyondString", prop("X", byte(edm.String)+1)},
		{"InvalidBoolean", prop("X", byte(edm.Boolean), 2)},
		{"Int32OutOfRange", prop("X", byte(edm.Int32), binary.AppendVarint(nil, math.MaxInt32+1)...)},
		{"StringLengthBeyondRecord", prop("X", byte(edm.String), 10, 'a')},
		{"OverlongVarint", prop("X", byte(edm.Int64), bytes.Repeat([]byte{0xff}, 11)...)},
		{"ShortDouble", prop("X", byte(edm.Double), 1, 2, 3)},
		{"DuplicateProperty", func() []byte {
			b := append([]byte(nil), header...)
			b = append(b, 2)
			for range 2 {
				b = appendString(b, "X")
				b = append(b, byte(edm.Boolean), 1)
			}
			return b
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if e, err := DecodeEntity(string(c.b)); !errors.Is(err, ErrCorrupt) {
				t.Errorf("DecodeEntity = %+v, %v; want ErrCorrupt", e, err)
			}
		})
	}
	if _, err := DecodeTimestamp([]byte{9}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("DecodeTimestamp(unknown version) = %v; want ErrCorrupt", err)
	}
}

func TestEncodeEntityRejectsInvalidType(t *testing.T) {
	t.Parallel()
	e := entity("a", "b", time.Unix(0, 0), map[string]edm.Value{"X": {Type: 0}})
	if _, err := EncodeEntity(e); err == nil {
		t.Error("EncodeEntity accepted an invalid Edm type")
	}
}

func TestTableInfoCodec(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []store.TableInfo{
		{Name: "MyTable"},
		{Name: "Acl", ACL: []model.SignedIdentifier{
			{ID: "a", Start: ts, Expiry: ts.Add(time.Hour), Permission: "raud"},
			{ID: "b"},
		}},
	}
	for _, info := range cases {
		t.Run(info.Name, func(t *testing.T) {
			b := EncodeTableInfo(info)
			got, err := DecodeTableInfo(string(b))
			if err != nil {
				t.Fatal(err)
			}
			if got.Name != info.Name || len(got.ACL) != len(info.ACL) {
				t.Fatalf("got %+v; want %+v", got, info)
			}
			for i, w := range info.ACL {
				g := got.ACL[i]
				if g.ID != w.ID || g.Permission != w.Permission || !g.Start.Equal(w.Start) || !g.Expiry.Equal(w.Expiry) || g.Start.IsZero() != w.Start.IsZero() {
					t.Errorf("ACL[%d] = %+v; want %+v", i, g, w)
				}
			}
			for n := range len(b) {
				if _, err := DecodeTableInfo(string(b[:n])); !errors.Is(err, ErrCorrupt) {
					t.Fatalf("prefix of %d bytes: err = %v; want ErrCorrupt", n, err)
				}
			}
			if _, err := DecodeTableInfo(string(append(b, 0))); !errors.Is(err, ErrCorrupt) {
				t.Errorf("trailing byte: err = %v; want ErrCorrupt", err)
			}
		})
	}
}

func TestServicePropertiesCodec(t *testing.T) {
	t.Parallel()
	for _, doc := range [][]byte{nil, {}, []byte("<x/>")} {
		got, err := DecodeServiceProperties(EncodeServiceProperties(doc))
		if err != nil || got == nil || !bytes.Equal(got, doc) {
			t.Errorf("round trip of %q = %q, %v", doc, got, err)
		}
	}
	for _, bad := range [][]byte{{}, {0}, {2, 'x'}} {
		if _, err := DecodeServiceProperties(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("DecodeServiceProperties(%v) = %v; want ErrCorrupt", bad, err)
		}
	}
}

func FuzzDecodeEntity(f *testing.F) {
	valid, _ := EncodeEntity(sampleEntity())
	f.Add(valid)
	f.Add([]byte{entityVersion1, 0, 0, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEntity(string(b))
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		// Whatever decodes re-encodes to a record that decodes the same.
		re, err := EncodeEntity(e)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeEntity(string(re))
		if err != nil {
			t.Fatalf("decode of re-encoded record: %v", err)
		}
		assertSameEntity(t, again, e)
	})
}

func TestDecodeEntityIntoReusesMap(t *testing.T) {
	t.Parallel()
	first, _ := EncodeEntity(entity("", "", time.Unix(1, 0), map[string]edm.Value{"Old": edm.NewInt32(1), "Both": edm.NewString("a")}))
	second, _ := EncodeEntity(entity("", "", time.Unix(2, 0), map[string]edm.Value{"Both": edm.NewString("b")}))
	var e model.Entity
	if err := DecodeEntityInto(&e, string(first)); err != nil || len(e.Properties) != 2 {
		t.Fatalf("first decode: %+v, %v", e, err)
	}
	if err := DecodeEntityInto(&e, string(second)); err != nil {
		t.Fatal(err)
	}
	if len(e.Properties) != 1 || e.Properties["Both"].Str != "b" || !e.Timestamp.Equal(time.Unix(2, 0)) {
		t.Errorf("second decode kept the first record's state: %+v", e)
	}
}

// FuzzVarints checks the decoder's string varints against encoding/binary's,
// which wrote them: same values, same refusals.
func FuzzVarints(f *testing.F) {
	f.Add([]byte{0})
	f.Add(binary.AppendUvarint(nil, math.MaxUint64))
	f.Add(bytes.Repeat([]byte{0xff}, 11))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := decoder{s: string(b)}
		got := d.uvarint()
		want, n := binary.Uvarint(b)
		if (n <= 0) != (d.err != nil) || (n > 0 && (got != want || len(d.s) != len(b)-n)) {
			t.Fatalf("uvarint(%x) = %d, %v, %d left; binary.Uvarint = %d, %d", b, got, d.err, len(d.s), want, n)
		}
		d = decoder{s: string(b)}
		gotS := d.varint()
		wantS, n := binary.Varint(b)
		if (n <= 0) != (d.err != nil) || (n > 0 && gotS != wantS) {
			t.Fatalf("varint(%x) = %d, %v; binary.Varint = %d, %d", b, gotS, d.err, wantS, n)
		}
	})
}
