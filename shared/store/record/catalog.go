package record

import (
	"encoding/binary"
	"fmt"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// EncodeTableInfo encodes a catalog entry:
//
//	version byte (1), uvarint-prefixed display name, uvarint ACL count,
//	per identifier: ID, Start, Expiry, Permission
func EncodeTableInfo(info store.TableInfo) []byte {
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

// DecodeTableInfo decodes a record written by EncodeTableInfo; its strings
// are substrings of rec.
func DecodeTableInfo(rec string) (store.TableInfo, error) {
	d := decoder{s: rec}
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
	if err := d.trailing("table info"); err != nil {
		return store.TableInfo{}, err
	}
	return info, nil
}

// EncodeServiceProperties prefixes the document with its version byte, which
// also tells an empty document from none.
func EncodeServiceProperties(doc []byte) []byte {
	return append([]byte{serviceVersion1}, doc...)
}

// DecodeServiceProperties returns a copy of the document in b.
func DecodeServiceProperties(b []byte) ([]byte, error) {
	if len(b) == 0 || b[0] != serviceVersion1 {
		return nil, fmt.Errorf("%w: unknown service properties encoding", ErrCorrupt)
	}
	return append([]byte{}, b[1:]...), nil
}
