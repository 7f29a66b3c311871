package httpapi_test

import (
	"testing"

	"github.com/tablebridge/tablebridge/internal/testserver"
)

// TestSDKBolt runs the aztables conformance suite against the real handler
// over the embedded bbolt store (a fresh file per server, in t.TempDir()).
func TestSDKBolt(t *testing.T) {
	testserver.RunSDKSuite(t, func(t *testing.T) *testserver.Server {
		return testserver.New(t)
	})
}
