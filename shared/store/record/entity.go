package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// Encoding versions: the first byte of every record.
const (
	entityVersion1    byte = 1
	tableInfoVersion1 byte = 1
	serviceVersion1   byte = 1
)

// EncodeEntity encodes e's Timestamp and properties (not its keys):
//
//	version byte (1)
//	Timestamp: varint Unix seconds, uvarint nanoseconds
//	uvarint property count
//	per property, in map order: uvarint name length, name, type byte, payload
//
// Payloads: String, Guid, Binary: uvarint length and bytes; Boolean: one byte;
// Int32, Int64: varint; Double: 8 bytes of IEEE bits, little-endian;
// DateTime: like Timestamp.
func EncodeEntity(e *model.Entity) ([]byte, error) {
	size := 1 + 2*binary.MaxVarintLen64 + binary.MaxVarintLen64
	for name, v := range e.Properties {
		size += binary.MaxVarintLen64 + len(name) + 1 + 2*binary.MaxVarintLen64 + len(v.Str) + len(v.Bin)
	}
	return AppendEntity(make([]byte, 0, size), e)
}

// AppendEntity appends the encoding of e (see EncodeEntity) to b. It walks
// the properties once; on error it returns b as it was.
func AppendEntity(b []byte, e *model.Entity) ([]byte, error) {
	start := len(b)
	b = append(b, entityVersion1)
	b = appendTime(b, e.Timestamp)
	b = binary.AppendUvarint(b, uint64(len(e.Properties)))
	// Properties go in map order: decoding builds a map, so no reader
	// depends on their order, and sorting them is work no reader needs.
	for name, v := range e.Properties {
		b = appendString(b, name)
		b = append(b, byte(v.Type))
		switch v.Type {
		case edm.String, edm.Guid:
			b = appendString(b, v.Str)
		case edm.Binary:
			b = binary.AppendUvarint(b, uint64(len(v.Bin)))
			b = append(b, v.Bin...)
		case edm.Boolean:
			if v.Bool {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case edm.Int32, edm.Int64:
			b = binary.AppendVarint(b, v.Int)
		case edm.Double:
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v.Float))
		case edm.DateTime:
			b = appendTime(b, v.Time)
		default:
			return b[:start], fmt.Errorf("record: property %q has invalid type %d", name, v.Type)
		}
	}
	return b, nil
}

// DecodeEntity decodes a record written by EncodeEntity into a new entity
// without keys. Its names and string values are substrings of rec.
func DecodeEntity(rec string) (*model.Entity, error) {
	e := &model.Entity{}
	if err := DecodeEntityInto(e, rec); err != nil {
		return nil, err
	}
	return e, nil
}

// DecodeEntityInto decodes rec into e's Timestamp and Properties, reusing
// e's property map (cleared first) when it has one: a scan that tests every
// row against a filter then allocates nothing for the rows it skips.
func DecodeEntityInto(e *model.Entity, rec string) error {
	d := decoder{s: rec}
	if v := d.byte(); d.err == nil && v != entityVersion1 {
		return fmt.Errorf("%w: unknown entity encoding version %d", ErrCorrupt, v)
	}
	e.Timestamp = d.time()
	n := d.count()
	if d.err != nil {
		return d.fail("entity")
	}
	if e.Properties == nil {
		e.Properties = make(map[string]edm.Value, n)
	} else {
		clear(e.Properties)
	}
	for range n {
		name := d.string()
		v := edm.Value{Type: edm.Type(d.byte())}
		switch v.Type {
		case edm.String, edm.Guid:
			v.Str = d.string()
		case edm.Binary:
			v.Bin = d.bytes()
		case edm.Boolean:
			switch d.byte() {
			case 0:
			case 1:
				v.Bool = true
			default:
				d.setErr("invalid boolean")
			}
		case edm.Int32:
			v.Int = d.varint()
			if v.Int != int64(int32(v.Int)) {
				d.setErr("Int32 out of range")
			}
		case edm.Int64:
			v.Int = d.varint()
		case edm.Double:
			v.Float = math.Float64frombits(d.uint64())
		case edm.DateTime:
			v.Time = d.time()
		default:
			d.setErr(fmt.Sprintf("invalid type %d", v.Type))
		}
		if d.err != nil {
			return d.fail("entity")
		}
		e.Properties[name] = v
	}
	if len(e.Properties) != n {
		return fmt.Errorf("%w: entity: duplicate property names", ErrCorrupt)
	}
	return d.trailing("entity")
}

// DecodeTimestamp reads only the Timestamp of an entity record: enough to
// check an If-Match condition without decoding the properties, or copying
// the record.
func DecodeTimestamp(rec []byte) (time.Time, error) {
	// The version byte and the two varints of a time take at most this
	// much; converting only this prefix keeps the string on the stack.
	const prefix = 1 + 2*binary.MaxVarintLen64
	d := decoder{s: string(rec[:min(len(rec), prefix)])}
	if v := d.byte(); d.err == nil && v != entityVersion1 {
		return time.Time{}, fmt.Errorf("%w: unknown entity encoding version %d", ErrCorrupt, v)
	}
	ts := d.time()
	if d.err != nil {
		return time.Time{}, d.fail("entity")
	}
	return ts, nil
}
