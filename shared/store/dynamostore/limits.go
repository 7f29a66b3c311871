package dynamostore

import (
	"fmt"
	"unicode/utf16"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// maxEntitySize is Azure's limit on all property data of an entity, 1 MiB,
// measured by its documented size formula (see azureSize).
const maxEntitySize = 1 << 20

// checkLimits reports store.ErrTooManyProperties or store.ErrEntityTooLarge
// when the result of a merge breaks the data model's limits. The service
// validates what clients send; only a merge result is new to it.
//
// TODO(lead): use model.ValidateEntity once it lands, so the rule lives once.
func checkLimits(e *model.Entity) error {
	if n := len(e.Properties); n > maxCustomProperties {
		return fmt.Errorf("dynamostore: merge result has %d custom properties, at most %d: %w", n, maxCustomProperties, store.ErrTooManyProperties)
	}
	if size := azureSize(e); size > maxEntitySize {
		return fmt.Errorf("dynamostore: merge result measures %d bytes, at most %d: %w", size, maxEntitySize, store.ErrEntityTooLarge)
	}
	return nil
}

// azureSize measures an entity the way Azure documents it: 4 bytes, plus 2
// bytes per UTF-16 code unit of PartitionKey and RowKey, plus per property 8
// bytes, 2 per code unit of its name, and its value's size (strings 4 + 2 per
// code unit, binaries 4 + length, Guid 16, DateTime, Double and Int64 8,
// Int32 4, Boolean 1).
func azureSize(e *model.Entity) int {
	size := 4 + 2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	for name, v := range e.Properties {
		size += 8 + 2*utf16Len(name)
		switch v.Type {
		case edm.String:
			size += 4 + 2*utf16Len(v.Str)
		case edm.Binary:
			size += 4 + len(v.Bin)
		case edm.Guid:
			size += 16
		case edm.DateTime, edm.Double, edm.Int64:
			size += 8
		case edm.Int32:
			size += 4
		case edm.Boolean:
			size++
		}
	}
	return size
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
