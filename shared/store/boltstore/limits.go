package boltstore

import (
	"fmt"
	"unicode/utf16"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// The data model's entity limits ("Understanding the Table service data
// model"): 255 properties including PartitionKey, RowKey and Timestamp, so
// 252 custom ones, and 1 MiB for all property data together.
//
// TODO(lead): the service validates what clients send through
// model.ValidateEntity, which did not exist yet when this was written. Only
// the result of a merge needs checking here (the service cannot see it);
// switch checkMergedLimits to model.ValidateEntity once it lands so there is
// one rule, mapping its TooManyProperties and EntityTooLarge codes to the
// store sentinels.
const (
	maxCustomProperties = 252
	maxEntitySize       = 1 << 20
)

// checkMergedLimits reports store.ErrTooManyProperties or
// store.ErrEntityTooLarge when a merge result breaks the limits.
func checkMergedLimits(e *model.Entity) error {
	if len(e.Properties) > maxCustomProperties {
		return fmt.Errorf("%d custom properties, at most %d: %w", len(e.Properties), maxCustomProperties, store.ErrTooManyProperties)
	}
	if size := entitySize(e); size > maxEntitySize {
		return fmt.Errorf("entity size %d bytes, at most %d: %w", size, maxEntitySize, store.ErrEntityTooLarge)
	}
	return nil
}

// entitySize estimates the stored size the way Azure documents it: 4 bytes,
// plus 2 bytes per UTF-16 code unit of PartitionKey and RowKey, plus per
// property 8 bytes, 2 per code unit of its name, and its value's size
// (strings 4 + 2 per code unit, binaries 4 + length, Guid 16, DateTime,
// Double and Int64 8, Int32 4, Boolean 1).
func entitySize(e *model.Entity) int {
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

// utf16Len counts UTF-16 code units, the unit Azure measures strings in.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
