package httpapi_test

import (
	"testing"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// memoryServer serves a fresh in-memory store, the store of serve -store
// memory and tablebridgetest's default.
func memoryServer(t *testing.T) *protocoltest.Server {
	st, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return protocoltest.New(t, tablebridgetest.WithStore(st))
}

// TestSDKMemory runs the aztables conformance suite over the in-memory
// store.
func TestSDKMemory(t *testing.T) {
	t.Parallel()
	protocoltest.RunSDK(t, memoryServer)
}

// TestProtocolMemory runs the protocol conformance suite over the
// in-memory store.
func TestProtocolMemory(t *testing.T) {
	t.Parallel()
	protocoltest.RunProtocol(t, memoryServer)
}
