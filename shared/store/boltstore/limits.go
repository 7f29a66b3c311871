package boltstore

import (
	"fmt"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// checkMergedLimits reports store.ErrTooManyProperties or
// store.ErrEntityTooLarge when the result of a merge breaks the data model's
// limits. The service validates what clients send (model.ValidateEntity),
// but only the store sees a merge's result; the rule itself, the property
// count and Azure's size formula, stays in package model.
func checkMergedLimits(e *model.Entity) error {
	if len(e.Properties) > model.MaxProperties {
		return fmt.Errorf("%d custom properties, at most %d: %w", len(e.Properties), model.MaxProperties, store.ErrTooManyProperties)
	}
	if size := model.EntitySize(e); size > model.MaxEntitySize {
		return fmt.Errorf("entity size %d bytes, at most %d: %w", size, model.MaxEntitySize, store.ErrEntityTooLarge)
	}
	return nil
}
