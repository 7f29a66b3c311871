package linearize_test

import (
	"os"
	"testing"

	"github.com/tablebridge/tablebridge/internal/serveproc"
)

// TestMain stops the DynamoDB Local a test started and removes the serve
// binary serveproc built.
func TestMain(m *testing.M) { os.Exit(serveproc.Main(m)) }
