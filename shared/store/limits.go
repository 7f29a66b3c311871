package store

import (
	"fmt"

	"github.com/tablebridge/tablebridge/shared/model"
)

// CheckMergedLimits reports ErrTooManyProperties or ErrEntityTooLarge when
// the result of a merge breaks the data model's limits. The service
// validates what clients send (model.ValidateEntity), but only a store sees
// a merge's result; the rule itself, the property count and Azure's size
// formula, stays in package model.
func CheckMergedLimits(e *model.Entity) error {
	if n := len(e.Properties); n > model.MaxProperties {
		return fmt.Errorf("store: merge result has %d custom properties, at most %d: %w", n, model.MaxProperties, ErrTooManyProperties)
	}
	if size := model.EntitySize(e); size > model.MaxEntitySize {
		return fmt.Errorf("store: merge result measures %d bytes, at most %d: %w", size, model.MaxEntitySize, ErrEntityTooLarge)
	}
	return nil
}

// PageByteBudget ends a query page early, with a continuation, once the
// entities it holds reach this many stored bytes, as Azure's pages may end
// before 1000 entities. A page of 1000 entities of 1 MiB would be a
// gigabyte answer: with the budget an answer is a few MiB whatever the
// entities' sizes, so it fits a Lambda response (6 MB), and a client that
// never reads it holds a bounded buffer until the write timeout.
const PageByteBudget = 3 << 20
