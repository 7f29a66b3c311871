package model

import "github.com/tablebridge/tablebridge/shared/apierr"

// Codes apierr names for model's key rules.
const (
	codeKeyValueTooLarge      = apierr.KeyValueTooLarge
	codePrimaryKeyInvalidType = apierr.PrimaryKeyPropertyIsInvalidType
)

// Messages as Azure words them where they are known (the Java and Python SDK
// tests and issue reports quote them); the code's default message otherwise.
const (
	msgPropertyNameTooLong   = "The property name exceeds the maximum allowed length (255)."
	msgPropertyValueTooLarge = "The property value exceeds the maximum allowed size (64KB). If the property value is a string, it is UTF-16 encoded and the maximum number of characters should be 32K or less."
	msgEntityTooLarge        = "The entity is larger than the maximum allowed size (1MB)."
	msgTooManyProperties     = "The entity contains more properties than allowed. Each entity can include up to 252 properties to store data. Each entity also has 3 system properties."
	msgKeyValueTooLarge      = "The key value exceeds the maximum allowed length (1024)."
	msgKeyInvalidType        = "The PartitionKey and RowKey properties must be of type Edm.String."
	// Azure reports it at index 0 of a 202 batch answer, as "0:The batch
	// request operation exceeds ..." (the recording
	// shared/batch/testdata/azure_failure_too_many_operations.response).
	msgTooManyBatchOperations = "The batch request operation exceeds the maximum 100 changes per change set."
)

func newError(code apierr.Code, message, detail string) *apierr.Error {
	return &apierr.Error{Code: code, Message: message, Detail: detail}
}
