package dynamostore

import (
	"testing"

	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return newTestStore(t)
	}, storetest.PartitionsUnordered())
}
