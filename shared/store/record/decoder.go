package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// ErrCorrupt reports a record this version cannot decode: an unknown
// encoding version, a truncated record or an invalid field.
var ErrCorrupt = errors.New("corrupt record")

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

// decoder reads fields from the unread rest of a record and remembers the
// first error, so decoding code stays linear; every read after an error
// returns a zero value.
type decoder struct {
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

// trailing reports bytes left after the last field as a failure.
func (d *decoder) trailing(what string) error {
	if len(d.s) != 0 {
		return fmt.Errorf("%w: %s: %d trailing bytes", ErrCorrupt, what, len(d.s))
	}
	return nil
}

func (d *decoder) byte() byte {
	if d.err != nil {
		return 0
	}
	if len(d.s) < 1 {
		d.setErr("truncated")
		return 0
	}
	c := d.s[0]
	d.s = d.s[1:]
	return c
}

// uvarint reads an unsigned varint as binary.Uvarint does, refusing the
// same overlong and overflowing encodings.
func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	var x uint64
	var shift uint
	for i := 0; i < len(d.s); i++ {
		if i == binary.MaxVarintLen64 {
			break
		}
		c := d.s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			d.s = d.s[i+1:]
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	d.setErr("bad uvarint")
	return 0
}

// varint reads a zig-zag signed varint as binary.Varint does.
func (d *decoder) varint() int64 {
	ux := d.uvarint()
	x := int64(ux >> 1)
	if ux&1 != 0 {
		x = ^x
	}
	return x
}

func (d *decoder) uint64() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.s) < 8 {
		d.setErr("truncated")
		return 0
	}
	v := binary.LittleEndian.Uint64([]byte(d.s[:8]))
	d.s = d.s[8:]
	return v
}

// string returns the next length-prefixed field: a substring of the record.
func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil {
		return ""
	}
	if n > uint64(len(d.s)) {
		d.setErr("length beyond record")
		return ""
	}
	v := d.s[:n]
	d.s = d.s[n:]
	return v
}

// bytes returns a copy of the next length-prefixed field, since the caller
// may change it; an empty value stays non-nil so an empty Edm.Binary comes
// back as a present, empty value.
func (d *decoder) bytes() []byte {
	s := d.string()
	if d.err != nil {
		return nil
	}
	return append(make([]byte, 0, len(s)), s...)
}

// count reads an element count and bounds it by the bytes left (every
// element takes at least one byte), so a damaged count cannot make the
// decoder allocate without limit.
func (d *decoder) count() int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.s)) {
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
