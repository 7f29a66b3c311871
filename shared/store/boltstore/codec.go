package boltstore

import (
	"fmt"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store/record"
)

// ErrCorrupt reports a stored record this version cannot decode: an unknown
// encoding version, a truncated record or an invalid field. Values are
// encoded by package record; keys here.
var ErrCorrupt = record.ErrCorrupt

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

// decodeEntity decodes a stored value into an entity with the keys pk and
// rk, sharing no memory with them or with v (bbolt's pages are only valid
// inside their transaction): one conversion copies the keys, one the
// record, whose substrings the names and string values are.
func decodeEntity(pk, rk, v []byte) (*model.Entity, error) {
	e, err := record.DecodeEntity(string(v))
	if err != nil {
		return nil, err
	}
	if len(pk)+len(rk) > 0 {
		keys := string(pk) + string(rk)
		e.PartitionKey, e.RowKey = keys[:len(pk)], keys[len(pk):]
	}
	return e, nil
}
