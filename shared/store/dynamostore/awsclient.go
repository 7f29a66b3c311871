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

// defaultRegion is used when neither the options nor the AWS config chain
// name a region, which only happens off AWS (DynamoDB Local).
const defaultRegion = "us-east-1"

// Open builds the DynamoDB client of opts (NewClient) and the store on it
// (New): what a process that needs no other AWS client does.
func Open(ctx context.Context, opts Options) (*Store, error) {
	client, err := NewClient(ctx, opts)
	if err != nil {
		return nil, err
	}
	return New(ctx, client, opts)
}

// NewClient builds a DynamoDB client for opts.Endpoint and opts.Region with
// the standard AWS credential and region chain: LoadAWSConfig, then
// NewClientFromConfig. Build it once per process (Lambda init), not per
// request.
func NewClient(ctx context.Context, opts Options) (*dynamodb.Client, error) {
	cfg, err := LoadAWSConfig(ctx, opts)
	if err != nil {
		return nil, err
	}
	return NewClientFromConfig(cfg, opts), nil
}

// LoadAWSConfig loads the standard AWS credential and region chain with the
// HTTP client the store wants. A process that needs other AWS clients too
// (the Lambda functions read Secrets Manager) loads it once and builds every
// client from it. With an Endpoint and no credentials in the chain it uses
// dummy static credentials, as DynamoDB Local accepts any.
func LoadAWSConfig(ctx context.Context, opts Options) (aws.Config, error) {
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
		return aws.Config{}, fmt.Errorf("dynamodb: load AWS config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultRegion
	}
	if opts.Endpoint != "" {
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			cfg.Credentials = credentials.NewStaticCredentialsProvider("local", "local", "")
		}
	}
	return cfg, nil
}

// NewClientFromConfig builds the DynamoDB client from a loaded config; optFns
// add to the store's own options (the Lambda functions meter capacity).
func NewClientFromConfig(cfg aws.Config, opts Options, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	// Configure: throttling is retried a few times with short backoff; what
	// remains becomes 503 ServerBusy, which the Azure SDKs retry themselves.
	fns := append([]func(*dynamodb.Options){Configure, func(o *dynamodb.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
			// DynamoDB Local's error responses carry no CRC32 checksum.
			o.DisableValidateResponseChecksum = true
		}
	}}, optFns...)
	return dynamodb.NewFromConfig(cfg, fns...)
}
