package linearize_test

import (
	"testing"

	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// TestMemory checks histories of the whole stack over the memory store,
// whose queries hold to one instant (memstore's lock).
func TestMemory(t *testing.T) {
	t.Parallel()
	srv := tablebridgetest.NewServer(t)
	linearize.Test(t, linearize.Config{Name: "memory", SnapshotQueries: true}, srv.Client())
}
