package dynamolocal

import (
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Region is the region every local client uses. DynamoDB Local keeps a
// separate database per access key and region, so one fixed pair lets
// separate processes see the same tables.
const Region = "us-east-1"

// requestTimeout bounds one HTTP attempt against DynamoDB Local, so a wedged
// JVM fails a test instead of hanging it.
const requestTimeout = 30 * time.Second

// NewClient returns a DynamoDB client for endpoint with dummy static
// credentials, region us-east-1, a bounded HTTP timeout and no response
// checksum validation: DynamoDB Local's error responses carry no CRC32, and
// the SDK logs a warning for each one otherwise. optFns adjust the options
// further (tests add middleware through them).
func NewClient(endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	opts := dynamodb.Options{
		Region:                          Region,
		BaseEndpoint:                    aws.String(endpoint),
		Credentials:                     credentials.NewStaticCredentialsProvider("tablebridge", "tablebridge", ""),
		DisableValidateResponseChecksum: true,
		HTTPClient:                      &http.Client{Timeout: requestTimeout},
		RetryMaxAttempts:                3,
	}
	for _, fn := range optFns {
		fn(&opts)
	}
	return dynamodb.New(opts)
}
