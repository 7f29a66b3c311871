package lambdafn

import (
	"os"
	"testing"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

// The tests that need DynamoDB run against DynamoDB Local: the shared
// instance of make test, or one started for this test binary and stopped
// here. Without it they skip loudly, or fail under CI.
func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }
