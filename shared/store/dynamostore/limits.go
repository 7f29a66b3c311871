package dynamostore

import (
	"fmt"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Azure's entity limits, from the model package that owns them: 252 custom
// properties (255 with PartitionKey, RowKey and Timestamp) and 1 MiB as
// model.EntitySize measures it.
const (
	maxCustomProperties = model.MaxProperties
	maxEntitySize       = model.MaxEntitySize
)

// checkLimits reports store.ErrTooManyProperties or store.ErrEntityTooLarge
// when the result of a merge breaks the data model's limits. The service
// validates what clients send (model.ValidateEntity); only a merge result,
// which depends on the stored entity, is new to it.
func checkLimits(e *model.Entity) error {
	if n := len(e.Properties); n > maxCustomProperties {
		return fmt.Errorf("dynamostore: merge result has %d custom properties, at most %d: %w", n, maxCustomProperties, store.ErrTooManyProperties)
	}
	if size := model.EntitySize(e); size > maxEntitySize {
		return fmt.Errorf("dynamostore: merge result measures %d bytes, at most %d: %w", size, maxEntitySize, store.ErrEntityTooLarge)
	}
	return nil
}
