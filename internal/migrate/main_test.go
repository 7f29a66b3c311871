package migrate_test

import (
	"os"
	"testing"

	"github.com/tablebridge/tablebridge/internal/azurite"
	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

// TestMain stops the DynamoDB Local and Azurite instances the tests may have
// started for this binary.
func TestMain(m *testing.M) {
	code := dynamolocal.Main(m)
	azurite.StopShared()
	os.Exit(code)
}
