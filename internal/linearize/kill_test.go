package linearize_test

import (
	"testing"

	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/internal/serveproc"
)

// TestBoltKill checks histories of the real `tablebridge serve` on its
// bolt file, killed with SIGKILL in the middle of each history and
// restarted on the same data: every acknowledged write must survive it, a
// write in flight at the kill (indeterminate) may or may not, and a write
// refused while the server is down was not performed. bbolt's read
// transactions are snapshots, so queries are held to one instant.
func TestBoltKill(t *testing.T) {
	t.Parallel()
	localproc.SkipShort(t, "the tablebridge serve binary")
	srv := serveproc.Start(t, "bolt")
	svc := protocoltest.NewServiceClient(t, srv.ConnectionString)
	kills := 0
	linearize.Test(t, linearize.Config{Name: "bolt-kill", SnapshotQueries: true, Midway: func(barrier func()) {
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
