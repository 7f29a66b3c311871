package loadgen

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
)

// Key widths are fixed so every entity of a run has the same size and keys
// sort the way they were generated.
const (
	workerDigits    = 4
	partitionDigits = 6
	rowDigits       = 10
)

// Key kinds keep the phases' data apart in the one table of a run.
const (
	kindInsert = 'i'
	kindSeed   = 'q'
	kindBatch  = 'b'
)

// appendPadded appends v in decimal, zero-padded to width digits.
func appendPadded(b []byte, v int64, width int) []byte {
	var digits [20]byte
	s := strconv.AppendInt(digits[:0], v, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// appendPartitionKey appends "<kind><worker>-<partition>", e.g. i0003-000012.
// The seed data set has no worker: q-000012.
func appendPartitionKey(b []byte, kind byte, worker int, partition int64) []byte {
	b = append(b, kind)
	if worker >= 0 {
		b = appendPadded(b, int64(worker), workerDigits)
	}
	b = append(b, '-')
	return appendPadded(b, partition, partitionDigits)
}

// appendRowKey appends the row number zero-padded to rowDigits.
func appendRowKey(b []byte, row int64) []byte {
	return appendPadded(b, row, rowDigits)
}

// entityTemplate renders the benchmark entity: PartitionKey, RowKey and ten
// properties covering every Edm type, one String padded so the JSON comes to
// about the requested size. The properties are written in sorted order
// because aztables re-marshals an entity through a map (sorted keys) before
// sending it, and the bench sends the very bytes the SDK would.
//
// Only the keys change between entities, so the template is three constant
// segments around them and rendering is two appends per segment.
type entityTemplate struct {
	beforePK, betweenKeys, afterRK []byte
	size                           int
	// values are the same properties typed, for the direct DynamoDB mode.
	values entityValues
}

// entityValues are the benchmark entity's properties other than the keys.
// The direct DynamoDB mode stores them as native attributes.
type entityValues struct {
	Name, City   string
	Active       bool
	Count        int32
	Total        int64
	Price        float64
	Created, Ref string
	Blob         []byte
	Payload      string
}

// Placeholders mark where the keys go while the template is built.
const (
	pkPlaceholder = "\x00PK\x00"
	rkPlaceholder = "\x00RK\x00"
)

// newEntityTemplate builds a template whose rendered JSON is size bytes, or
// the size of the unpadded entity (about 400 bytes with all eight Edm
// types and their annotations) when size is smaller.
func newEntityTemplate(size int, rng *rand.Rand) (*entityTemplate, error) {
	blob := make([]byte, 6)
	for i := range blob {
		blob[i] = byte(rng.UintN(256))
	}
	guid := fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x",
		rng.Uint32(), rng.UintN(1<<16), rng.UintN(1<<12), rng.UintN(1<<12), rng.Uint64()&(1<<48-1))
	// Short names keep the unpadded entity near 400 bytes while covering
	// all eight Edm types; the annotated ones are what a typed SDK entity
	// (aztables.EDMEntity) sends.
	// The values are drawn in this order so a seed renders the same
	// entity it always has.
	v := entityValues{Name: "bench", Ref: guid, Blob: blob, Active: true}
	v.City = "c" + strconv.Itoa(int(rng.UintN(1000)))
	v.Count = int32(rng.UintN(1 << 30))
	v.Total = int64(rng.Uint64()>>2) | 1<<60 // beyond 2^53
	// Never integral: an integral JSON number would be inferred as Int32.
	v.Price = float64(rng.UintN(100000)) + 0.25
	v.Created = "2024-05-01T12:34:56.1234567Z" // all 7 fractional digits
	props := map[string]any{
		"PartitionKey":       pkPlaceholder,
		"RowKey":             rkPlaceholder,
		"Name":               v.Name,
		"City":               v.City,
		"Active":             v.Active,
		"Count":              v.Count,
		"Total@odata.type":   "Edm.Int64",
		"Total":              strconv.FormatInt(v.Total, 10),
		"Price":              v.Price,
		"Created@odata.type": "Edm.DateTime",
		"Created":            v.Created,
		"Ref@odata.type":     "Edm.Guid",
		"Ref":                v.Ref,
		"Blob@odata.type":    "Edm.Binary",
		"Blob":               base64.StdEncoding.EncodeToString(v.Blob),
		"Payload":            "",
	}
	keyLen := len(pkPlaceholder) + len(rkPlaceholder)
	realKeyLen := (1 + workerDigits + 1 + partitionDigits) + rowDigits
	bare, err := marshalSorted(props)
	if err != nil {
		return nil, err
	}
	if pad := size - (len(bare) - keyLen + realKeyLen); pad > 0 {
		const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
		payload := make([]byte, pad)
		for i := range payload {
			payload[i] = alphabet[rng.UintN(uint(len(alphabet)))]
		}
		v.Payload = string(payload)
		props["Payload"] = v.Payload
	}
	full, err := marshalSorted(props)
	if err != nil {
		return nil, err
	}
	pk := bytes.Index(full, []byte(pkPlaceholder))
	rk := bytes.Index(full, []byte(rkPlaceholder))
	if pk < 0 || rk < pk {
		return nil, fmt.Errorf("entity template: key placeholders not found in %q", full)
	}
	return &entityTemplate{
		beforePK:    full[:pk],
		betweenKeys: full[pk+len(pkPlaceholder) : rk],
		afterRK:     full[rk+len(rkPlaceholder):],
		size:        len(full) - keyLen + realKeyLen,
		values:      v,
	}, nil
}

// marshalSorted encodes props as a JSON object with sorted keys, without
// HTML escaping and with the placeholders' NUL bytes kept literal so they can
// be found and cut out again.
func marshalSorted(props map[string]any) ([]byte, error) {
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	out := []byte{'{'}
	for i, name := range names {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, name)
		out = append(out, ':')
		if v, ok := props[name].(string); ok && (v == pkPlaceholder || v == rkPlaceholder) {
			out = append(out, '"')
			out = append(out, v...)
			out = append(out, '"')
			continue
		}
		enc, err := json.Marshal(props[name])
		if err != nil {
			return nil, err
		}
		out = append(out, enc...)
	}
	return append(out, '}'), nil
}

// appendEntity renders one entity with the given keys. The keys must be JSON
// string-safe (the bench's keys are digits, letters and '-').
func (t *entityTemplate) appendEntity(b, pk, rk []byte) []byte {
	b = append(b, t.beforePK...)
	b = append(b, pk...)
	b = append(b, t.betweenKeys...)
	b = append(b, rk...)
	return append(b, t.afterRK...)
}
