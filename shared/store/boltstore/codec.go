package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// ErrCorrupt reports a stored record this version cannot decode: an unknown
// encoding version, a truncated record or an invalid field.
var ErrCorrupt = errors.New("boltstore: corrupt record")

// Encoding versions: the first byte of every stored value.
const (
	entityVersion1    byte = 1
	tableInfoVersion1 byte = 1
	serviceVersion1   byte = 1
)

// keySeparator joins PartitionKey and RowKey in an entity key. It is the
// smallest byte, so (pk, rk) pairs sort as the concatenation does.
const keySeparator = 0x00

// entityKey returns PartitionKey + "\x00" + RowKey.
func entityKey(pk, rk string) []byte {
	return appendEntityKey(make([]byte, 0, len(pk)+1+len(rk)), pk, rk)
}

// appendEntityKey appends entityKey(pk, rk) to b.
func appendEntityKey(b []byte, pk, rk string) []byte {
	b = append(b, pk...)
	b = append(b, keySeparator)
	return append(b, rk...)
}

// splitKey is the inverse of entityKey. The PartitionKey ends at the first
// separator; the store refuses PartitionKeys that contain one.
func splitKey(k []byte) (pk, rk []byte, err error) {
	for i, c := range k {
		if c == keySeparator {
			return k[:i], k[i+1:], nil
		}
	}
	return nil, nil, fmt.Errorf("%w: entity key %q has no separator", ErrCorrupt, k)
}

// encodeEntity encodes e's Timestamp and properties (not its keys):
//
//	version byte (1)
//	Timestamp: varint Unix seconds, uvarint nanoseconds
//	uvarint property count
//	per property, in map order: uvarint name length, name, type byte, payload
//
// Payloads: String, Guid, Binary: uvarint length and bytes; Boolean: one byte;
// Int32, Int64: varint; Double: 8 bytes of IEEE bits, little-endian;
// DateTime: like Timestamp.
func encodeEntity(e *model.Entity) ([]byte, error) {
	size := 1 + 2*binary.MaxVarintLen64 + binary.MaxVarintLen64
	for name, v := range e.Properties {
		size += binary.MaxVarintLen64 + len(name) + 1 + 2*binary.MaxVarintLen64 + len(v.Str) + len(v.Bin)
	}
	return appendEntity(make([]byte, 0, size), e)
}

// appendEntity appends the encoding of e (see encodeEntity) to b. It walks
// the properties once; on error it returns b as it was.
func appendEntity(b []byte, e *model.Entity) ([]byte, error) {
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
			return b[:start], fmt.Errorf("boltstore: property %q has invalid type %d", name, v.Type)
		}
	}
	return b, nil
}

// decodeEntity decodes a value written by encodeEntity into a fresh entity
// that shares no memory with b (bbolt's pages are only valid inside their
// transaction).
func decodeEntity(pk, rk, b []byte) (*model.Entity, error) {
	// One string conversion copies the whole record; names and string
	// values are substrings of it. Scans decode every row, and this saves
	// an allocation per string property.
	d := decoder{b: b, s: string(b)}
	if v := d.byte(); d.err == nil && v != entityVersion1 {
		return nil, fmt.Errorf("%w: unknown entity encoding version %d", ErrCorrupt, v)
	}
	e := &model.Entity{Timestamp: d.time()}
	if len(pk)+len(rk) > 0 {
		keys := string(pk) + string(rk)
		e.PartitionKey, e.RowKey = keys[:len(pk)], keys[len(pk):]
	}
	n := d.count()
	if d.err != nil {
		return nil, d.fail("entity")
	}
	e.Properties = make(map[string]edm.Value, n)
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
			return nil, d.fail("entity")
		}
		e.Properties[name] = v
	}
	if len(e.Properties) != n {
		return nil, fmt.Errorf("%w: entity: duplicate property names", ErrCorrupt)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: entity: %d trailing bytes", ErrCorrupt, len(d.b))
	}
	return e, nil
}

// decodeTimestamp reads only the Timestamp of an encoded entity: enough to
// check an If-Match condition without decoding the properties.
func decodeTimestamp(b []byte) (time.Time, error) {
	d := decoder{b: b}
	if v := d.byte(); d.err == nil && v != entityVersion1 {
		return time.Time{}, fmt.Errorf("%w: unknown entity encoding version %d", ErrCorrupt, v)
	}
	ts := d.time()
	if d.err != nil {
		return time.Time{}, d.fail("entity")
	}
	return ts, nil
}

// encodeTableInfo encodes a catalog entry:
//
//	version byte (1), uvarint-prefixed display name, uvarint ACL count,
//	per identifier: ID, Start, Expiry, Permission
func encodeTableInfo(info store.TableInfo) []byte {
	b := []byte{tableInfoVersion1}
	b = appendString(b, info.Name)
	b = binary.AppendUvarint(b, uint64(len(info.ACL)))
	for _, si := range info.ACL {
		b = appendString(b, si.ID)
		b = appendTime(b, si.Start)
		b = appendTime(b, si.Expiry)
		b = appendString(b, si.Permission)
	}
	return b
}

func decodeTableInfo(b []byte) (store.TableInfo, error) {
	d := decoder{b: b}
	if v := d.byte(); d.err == nil && v != tableInfoVersion1 {
		return store.TableInfo{}, fmt.Errorf("%w: unknown table info encoding version %d", ErrCorrupt, v)
	}
	info := store.TableInfo{Name: d.string()}
	n := d.count()
	if d.err == nil && n > 0 {
		info.ACL = make([]model.SignedIdentifier, 0, n)
	}
	for range n {
		info.ACL = append(info.ACL, model.SignedIdentifier{
			ID:         d.string(),
			Start:      d.time(),
			Expiry:     d.time(),
			Permission: d.string(),
		})
	}
	if d.err != nil {
		return store.TableInfo{}, d.fail("table info")
	}
	if len(d.b) != 0 {
		return store.TableInfo{}, fmt.Errorf("%w: table info: %d trailing bytes", ErrCorrupt, len(d.b))
	}
	return info, nil
}

// encodeServiceProperties prefixes the document with its version byte, which
// also tells an empty document from none.
func encodeServiceProperties(doc []byte) []byte {
	return append([]byte{serviceVersion1}, doc...)
}

func decodeServiceProperties(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != serviceVersion1 {
		return nil, fmt.Errorf("%w: unknown service properties encoding", ErrCorrupt)
	}
	return append([]byte{}, b[1:]...), nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// appendTime writes Unix seconds and nanoseconds, which cover every
// time.Time exactly (the zero time included), unlike UnixNano.
func appendTime(b []byte, t time.Time) []byte {
	b = binary.AppendVarint(b, t.Unix())
	return binary.AppendUvarint(b, uint64(t.Nanosecond()))
}

// decoder reads fields and remembers the first error, so decoding code stays
// linear; every read after an error returns a zero value.
type decoder struct {
	b []byte
	// s, when set, is a string copy of the whole input; string fields are
	// then cut from it instead of copied one by one.
	s   string
	err error
}

func (d *decoder) setErr(msg string) {
	if d.err == nil {
		d.err = errors.New(msg)
	}
}

func (d *decoder) fail(what string) error {
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, what, d.err)
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 1 {
		d.setErr("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.setErr("bad uvarint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.setErr("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) < 8 {
		d.setErr("truncated")
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

// raw returns the next length-prefixed field without copying.
func (d *decoder) raw() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.setErr("length beyond record")
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// string returns a copy, never an alias of the input, which may be an
// mmapped bbolt page: a substring of the decoder's own string copy when it
// has one.
func (d *decoder) string() string {
	r := d.raw()
	if d.s == "" || d.err != nil {
		return string(r)
	}
	end := len(d.s) - len(d.b) // offset just past the field
	return d.s[end-len(r) : end]
}

// bytes returns a copy; an empty value stays non-nil so an empty Edm.Binary
// comes back as a present, empty value.
func (d *decoder) bytes() []byte {
	r := d.raw()
	if d.err != nil {
		return nil
	}
	return append(make([]byte, 0, len(r)), r...)
}

// count reads an element count and bounds it by the bytes left (every
// element takes at least one byte), so a damaged count cannot make the
// decoder allocate without limit.
func (d *decoder) count() int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.setErr("count beyond record")
		return 0
	}
	return int(n)
}

func (d *decoder) time() time.Time {
	sec := d.varint()
	nsec := d.uvarint()
	if d.err != nil {
		return time.Time{}
	}
	if nsec >= uint64(time.Second) {
		d.setErr("nanoseconds out of range")
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}
