package model

// Limits of the Table service data model ("Understanding the Table service
// data model"). Lengths of strings are in UTF-16 code units, the unit .NET
// and the service count in: a character outside the Basic Multilingual
// Plane (an emoji, say) counts twice.
const (
	// MinTableNameLength and MaxTableNameLength bound table names: "Table
	// names must be from 3 through 63 characters long."
	MinTableNameLength = 3
	MaxTableNameLength = 63

	// MaxKeyLength is the longest PartitionKey or RowKey: "a string value up
	// to 1 KiB in size", read as 1024 characters, as the service and the
	// SDK guards (Orleans' key sanitiser rejects 1024 and up) treat it.
	MaxKeyLength = 1024

	// MaxPropertyNameLength is the longest property name: "Property names
	// are case-sensitive strings up to 255 characters in size."
	MaxPropertyNameLength = 255

	// MaxProperties is the number of custom properties an entity may hold:
	// "An entity can have up to 255 properties, including three system
	// properties", so 252 of the client's own.
	MaxProperties = 252

	// MaxStringLength is the longest Edm.String: "String values can be up to
	// 64 KiB in size" in UTF-16, so 32 Ki code units.
	MaxStringLength = 32 << 10

	// MaxBinaryLength is the largest Edm.Binary: "An array of bytes up to 64
	// KiB in size."
	MaxBinaryLength = 64 << 10

	// MaxEntitySize is the largest entity as EntitySize counts it: "The
	// combined size of all data in an entity's properties can't exceed 1
	// MiB."
	MaxEntitySize = 1 << 20

	// MaxBatchOperations is the most operations one entity group
	// transaction holds ("Performing entity group transactions": "The
	// transaction can include at most 100 entities"). ValidateBatchSize
	// applies it; the $batch codec (package batch) and the service's
	// transactions (package tables) both ask it.
	MaxBatchOperations = 100
)

// The system property names. They live in Entity's own fields and are never
// custom properties.
const (
	PartitionKeyName = "PartitionKey"
	RowKeyName       = "RowKey"
	TimestampName    = "Timestamp"
)
