package httpapi_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// TestSDKBolt runs the aztables conformance suite against the real handler
// over the embedded bbolt store (a fresh file per server, in t.TempDir()).
func TestSDKBolt(t *testing.T) {
	t.Parallel()
	protocoltest.RunSDK(t, func(t *testing.T) *protocoltest.Server {
		return protocoltest.New(t)
	})
}

// TestSDKBoltShortPages runs the suite again with a scan budget of a few
// rows per page, so filtered queries return short and empty pages that
// still carry a continuation, as Azure's do after its five-second budget
// ("Query timeout and pagination"). Clients must keep following them.
func TestSDKBoltShortPages(t *testing.T) {
	t.Parallel()
	protocoltest.RunSDK(t, func(t *testing.T) *protocoltest.Server {
		st, err := boltstore.Open(filepath.Join(t.TempDir(), "tablebridge.db"), boltstore.WithScanBudget(3, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := st.Close(); err != nil {
				t.Error(err)
			}
		})
		return protocoltest.New(t, tablebridgetest.WithStore(st))
	})
}
