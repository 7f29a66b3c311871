package linearize_test

import (
	"testing"

	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/internal/serveproc"
)

// TestPebbleKill and TestBoltKill check histories of the real `tablebridge
// serve` on each embedded engine (pebble, the default for a new data
// directory, and bolt, kept for directories of earlier releases).

func TestPebbleKill(t *testing.T) { testKill(t, "pebble") }

func TestBoltKill(t *testing.T) { testKill(t, "bolt") }

// testKill kills the server with SIGKILL in the middle of each history and
// restarts it on the same data: every acknowledged write must survive it,
// a write in flight at the kill (indeterminate) may or may not, and a
// write refused while the server is down was not performed. Both engines
// read a query's page from one snapshot (a bbolt read transaction, a
// Pebble iterator), so queries are held to one instant.
func testKill(t *testing.T, engine string) {
	t.Parallel()
	localproc.SkipShort(t, "the tablebridge serve binary")
	srv := serveproc.Start(t, engine)
	svc := protocoltest.NewServiceClient(t, srv.ConnectionString)
	kills := 0
	linearize.Test(t, linearize.Config{Name: engine + "-kill", SnapshotQueries: true, Midway: func(barrier func()) {
		srv.Kill()
		barrier()
		kills++
		if err := srv.Restart(); err != nil {
			t.Errorf("restart after kill -9: %v", err)
		}
	}}, svc)
	if kills == 0 {
		t.Error("no history killed the server")
	}
}
