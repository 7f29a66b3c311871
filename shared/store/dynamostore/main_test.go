package dynamostore

import (
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

// The tests that need DynamoDB run against DynamoDB Local (never a fake
// client): the shared instance of make test, or one started for this test
// binary. Without it they skip loudly, or fail under CI.
func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// testTimeout bounds each test's DynamoDB calls.
const testTimeout = 2 * time.Minute

// newTestStore returns a store with a table prefix of its own, so tests and
// concurrent test binaries sharing one DynamoDB Local never meet.
func newTestStore(t testing.TB, optFns ...func(*dynamodb.Options)) *Store {
	t.Helper()
	client := dynamolocal.Client(t, optFns...)
	s, err := New(dynamolocal.Context(t, testTimeout), client, Options{TablePrefix: dynamolocal.UniqueName("tb") + "."})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}
