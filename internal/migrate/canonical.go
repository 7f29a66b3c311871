package migrate

import (
	"crypto/sha256"
	"encoding/binary"
	"hash/fnv"
	"math"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// The canonical encoding verify hashes. It covers the keys and every custom
// property with its Edm type and exact value, and leaves out the Timestamp,
// which each side assigns itself. Every field is length-prefixed, so no two
// different entities encode alike:
//
//	entity   = str(PartitionKey) str(RowKey) u32(count) property*  (in name order)
//	property = str(name) u8(type) value
//	value    = String, Guid: str   Binary: str(bytes)   Boolean: u8
//	           Int32, Int64: i64   Double: u64(IEEE bits, so NaN, -0 exact)
//	           DateTime: i64(Unix seconds) u32(nanoseconds)
//	str(s)   = u32(len(s)) s
//
// All integers are big-endian.

// appendCanonical appends e's canonical encoding.
func appendCanonical(dst []byte, e *model.Entity) []byte {
	dst = appendStr(dst, e.PartitionKey)
	dst = appendStr(dst, e.RowKey)
	names := sortedNames(e)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(names)))
	for _, n := range names {
		dst = appendStr(dst, n)
		dst = appendCanonicalValue(dst, e.Properties[n])
	}
	return dst
}

func appendCanonicalValue(dst []byte, v edm.Value) []byte {
	dst = append(dst, byte(v.Type))
	switch v.Type {
	case edm.String, edm.Guid:
		dst = appendStr(dst, v.Str)
	case edm.Binary:
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.Bin)))
		dst = append(dst, v.Bin...)
	case edm.Boolean:
		b := byte(0)
		if v.Bool {
			b = 1
		}
		dst = append(dst, b)
	case edm.Int32, edm.Int64:
		dst = binary.BigEndian.AppendUint64(dst, uint64(v.Int))
	case edm.Double:
		dst = binary.BigEndian.AppendUint64(dst, math.Float64bits(v.Float))
	case edm.DateTime:
		t := v.Time.UTC()
		dst = binary.BigEndian.AppendUint64(dst, uint64(t.Unix()))
		dst = binary.BigEndian.AppendUint32(dst, uint32(t.Nanosecond()))
	}
	return dst
}

func appendStr(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(s)))
	return append(dst, s...)
}

// digest is 128 bits of an entity's canonical SHA-256. Bucket sums add
// digests, so their order does not matter.
type digest struct{ hi, lo uint64 }

func (d digest) add(o digest) digest {
	lo := d.lo + o.lo
	carry := uint64(0)
	if lo < d.lo {
		carry = 1
	}
	return digest{hi: d.hi + o.hi + carry, lo: lo}
}

// entityDigest hashes e's canonical encoding; buf is scratch space that is
// returned for reuse.
func entityDigest(e *model.Entity, buf []byte) (digest, []byte) {
	buf = appendCanonical(buf[:0], e)
	sum := sha256.Sum256(buf)
	return digest{hi: binary.BigEndian.Uint64(sum[0:8]), lo: binary.BigEndian.Uint64(sum[8:16])}, buf
}

// keyBucket spreads keys over n buckets with FNV-1a of "pk\x00rk"; keys
// cannot hold U+0000, so the separator is unambiguous.
func keyBucket(pk, rk string, n int) int {
	h := fnv.New64a()
	h.Write([]byte(pk))
	h.Write([]byte{0})
	h.Write([]byte(rk))
	return int(h.Sum64() % uint64(n))
}
