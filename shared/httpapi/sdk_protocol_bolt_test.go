package httpapi_test

import (
	"testing"

	"github.com/tablebridge/tablebridge/internal/testserver"
)

// TestProtocolBolt runs the protocol conformance suite (entity group
// transactions, SAS, ACL, service properties and stats, CORS) against the
// real handler over the embedded bbolt store, a fresh file per server.
func TestProtocolBolt(t *testing.T) {
	t.Parallel()
	testserver.RunProtocolSuite(t, func(t *testing.T) *testserver.Server {
		return testserver.New(t)
	})
}
