package httpapi_test

import (
	"testing"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

// TestProtocolBolt runs the protocol conformance suite (entity group
// transactions, SAS, ACL, service properties and stats, CORS) against the
// real handler over the embedded bbolt store, a fresh file per server.
func TestProtocolBolt(t *testing.T) {
	t.Parallel()
	protocoltest.RunProtocol(t, func(t *testing.T) *protocoltest.Server {
		return protocoltest.New(t)
	})
}
