package dynamostore

import "github.com/tablebridge/tablebridge/shared/model"

// Azure's entity limits, from the model package that owns them: 252 custom
// properties (255 with PartitionKey, RowKey and Timestamp) and 1 MiB as
// model.EntitySize measures it.
const (
	maxCustomProperties = model.MaxProperties
	maxEntitySize       = model.MaxEntitySize
)
