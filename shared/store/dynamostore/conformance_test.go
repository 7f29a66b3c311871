package dynamostore

import (
	"testing"

	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

// TestConformance runs the shared suite on the default, ordered layout,
// which answers every query in key order as the bolt store does.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return newTestStore(t)
	})
}

// TestConformanceShared runs the suite on the shared layout: every Azure
// table of the store in one DynamoDB table.
func TestConformanceShared(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return newSharedStore(t, Options{})
	})
}

// TestConformanceUnordered runs the suite on tables without the order
// index, whose queries across partitions Scan.
func TestConformanceUnordered(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return newTestStoreWith(t, Options{Layout: LayoutUnordered})
	}, storetest.PartitionsUnordered())
}
