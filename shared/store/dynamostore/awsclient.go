package dynamostore

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// ClientOptions say how to reach DynamoDB.
type ClientOptions struct {
	// Endpoint overrides the AWS endpoint, e.g. http://127.0.0.1:8000 for
	// DynamoDB Local. Empty means AWS itself.
	Endpoint string
	// Region overrides the region of the AWS config chain.
	Region string
}

// defaultRegion is used when neither the options nor the AWS config chain
// name a region, which only happens off AWS (DynamoDB Local).
const defaultRegion = "us-east-1"

// NewClient builds a DynamoDB client with the standard AWS credential and
// region chain. With an Endpoint and no credentials in the chain it uses
// dummy static credentials, as DynamoDB Local accepts any. Build it once per
// process (Lambda init), not per request.
func NewClient(ctx context.Context, opts ClientOptions) (*dynamodb.Client, error) {
	loadOpts := []func(*config.LoadOptions) error{
		// A BuildableClient, not a plain *http.Client: the config loader
		// must be able to add a custom CA bundle (AWS_CA_BUNDLE) to it.
		config.WithHTTPClient(awshttp.NewBuildableClient().
			WithTimeout(30 * time.Second).
			WithTransportOptions(func(tr *http.Transport) {
				tr.MaxIdleConns = 256
				tr.MaxIdleConnsPerHost = 256
				tr.IdleConnTimeout = 90 * time.Second
			})),
	}
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	if opts.Endpoint != "" {
		// An explicit endpoint is DynamoDB Local or a proxy, not AWS: the
		// chain must not fall through to the EC2 instance metadata service,
		// a link-local address that is not ours to call and that only
		// times out off EC2.
		loadOpts = append(loadOpts, config.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("dynamodb: load AWS config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	if opts.Endpoint != "" {
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
		}
	}
	// Configure: throttling is retried a few times with short backoff; what
	// remains becomes 503 ServerBusy, which the Azure SDKs retry themselves.
	return dynamodb.NewFromConfig(cfg, Configure, func(o *dynamodb.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
			// DynamoDB Local's error responses carry no CRC32 checksum.
			o.DisableValidateResponseChecksum = true
		}
	}), nil
}
