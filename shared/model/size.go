package model

import "github.com/tablebridge/tablebridge/shared/edm"

// EntitySize is the size of an entity as the Table service counts it
// against MaxEntitySize. The formula is the one the Azure Storage team
// published ("How the size of an entity is calculated in Windows Azure
// table storage"):
//
//	4 bytes (Timestamp and system metadata)
//	+ 2 bytes per UTF-16 code unit of PartitionKey and RowKey
//	+ for each custom property: 8 bytes + 2 bytes per code unit of its name
//	  + the size of its value (ValueSize)
func EntitySize(e *Entity) int {
	size := keysSize(e.PartitionKey, e.RowKey)
	for name, v := range e.Properties {
		size += propertySize(utf16Len(name), v)
	}
	return size
}

// keysSize is the fixed part of EntitySize: the system metadata and keys.
func keysSize(partitionKey, rowKey string) int {
	return 4 + 2*(utf16Len(partitionKey)+utf16Len(rowKey))
}

// propertySize is one custom property's part of EntitySize, for a name of
// nameLen UTF-16 code units.
func propertySize(nameLen int, v edm.Value) int {
	return 8 + 2*nameLen + ValueSize(v)
}

// ValueSize is the size of one property value in the entity size formula:
//
//	Edm.String    2 bytes per UTF-16 code unit + 4 (its length)
//	Edm.Binary    1 byte per byte + 4 (its length)
//	Edm.DateTime  8    Edm.Double  8    Edm.Int64  8
//	Edm.Guid      16   Edm.Int32   4    Edm.Boolean 1
func ValueSize(v edm.Value) int {
	switch v.Type {
	case edm.String:
		return 2*utf16Len(v.Str) + 4
	case edm.Binary:
		return len(v.Bin) + 4
	case edm.DateTime, edm.Double, edm.Int64:
		return 8
	case edm.Guid:
		return 16
	case edm.Int32:
		return 4
	case edm.Boolean:
		return 1
	}
	return 0
}
