package loadgen

import (
	"os"
	"testing"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

// TestMain stops the DynamoDB Local instance the direct-mode tests may start.
func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }
