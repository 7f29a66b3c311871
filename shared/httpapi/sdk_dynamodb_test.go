package httpapi_test

import (
	"os"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

func TestMain(m *testing.M) { os.Exit(dynamolocal.Main(m)) }

// TestSDKDynamoDB runs the aztables conformance suite against the real
// handler over the DynamoDB store on DynamoDB Local. Every server gets its
// own table prefix, so each starts with an empty account.
func TestSDKDynamoDB(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("DynamoDB Local suite skipped in -short mode")
	}
	dynamolocal.Endpoint(t) // skip or fail loudly before any subtest
	protocoltest.RunSDK(t, newDynamoServer)
}

func newDynamoServer(t *testing.T) *protocoltest.Server {
	client := dynamolocal.Client(t)
	st, err := dynamostore.New(dynamolocal.Context(t, 2*time.Minute), client, dynamostore.Options{
		TablePrefix: dynamolocal.UniqueName("sdk") + "-", Endpoint: dynamolocal.Endpoint(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return protocoltest.New(t, tablebridgetest.WithStore(st))
}

// TestProtocolDynamoDB runs the transactions, SAS, ACL, service properties
// and CORS suite over the DynamoDB store on DynamoDB Local.
func TestProtocolDynamoDB(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("DynamoDB Local suite skipped in -short mode")
	}
	dynamolocal.Endpoint(t)
	protocoltest.RunProtocol(t, newDynamoServer)
}
