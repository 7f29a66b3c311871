package httpapi_test

import (
	"path/filepath"
	"testing"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/store/pebblestore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// pebbleServer serves a fresh Pebble store in t.TempDir(), the store of
// serve -store pebble, with a small cache and memtable: many servers run
// at once.
func pebbleServer(t *testing.T) *protocoltest.Server {
	st, err := pebblestore.Open(filepath.Join(t.TempDir(), "pebble"), pebblestore.WithMemory(1<<20, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return protocoltest.New(t, tablebridgetest.WithStore(st))
}

// TestSDKPebble runs the aztables conformance suite against the real
// handler over the Pebble store.
func TestSDKPebble(t *testing.T) {
	t.Parallel()
	protocoltest.RunSDK(t, pebbleServer)
}

// TestProtocolPebble runs the protocol conformance suite (entity group
// transactions, SAS, ACL, service properties and stats, CORS) over the
// Pebble store.
func TestProtocolPebble(t *testing.T) {
	t.Parallel()
	protocoltest.RunProtocol(t, pebbleServer)
}
