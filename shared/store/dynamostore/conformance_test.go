package dynamostore

import (
	"testing"

	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

// TestConformance runs the shared suite on the default, ordered layout,
// which answers every query in key order as the bolt store does.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return newTestStore(t)
	})
}

// TestConformanceUnordered runs the suite on tables without the order
// index, whose queries across partitions Scan.
func TestConformanceUnordered(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return newTestStoreWith(t, Options{Layout: LayoutUnordered})
	}, storetest.PartitionsUnordered())
}
