package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// dynamoFlags configure -store dynamodb. With no endpoint the standard AWS
// credential and region chain applies (environment, shared config, SSO,
// instance or task role).
type dynamoFlags struct {
	endpoint string
	region   string
	prefix   string
}

func (d *dynamoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.endpoint, "dynamodb-endpoint", "", "DynamoDB endpoint URL, e.g. http://127.0.0.1:8000 for DynamoDB Local (default: AWS)")
	fs.StringVar(&d.region, "dynamodb-region", "", "AWS region (default: the AWS config chain, else us-east-1)")
	fs.StringVar(&d.prefix, "table-prefix", "tablebridge-", "prefix of every DynamoDB table tablebridge creates")
}

func (d *dynamoFlags) describe() string {
	where := "AWS"
	if d.endpoint != "" {
		where = d.endpoint
	}
	return fmt.Sprintf("%s, table prefix %q", where, d.prefix)
}

func (d *dynamoFlags) open(ctx context.Context) (store.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	client, err := dynamostore.NewClient(ctx, dynamostore.ClientOptions{Endpoint: d.endpoint, Region: d.region})
	if err != nil {
		return nil, err
	}
	st, err := dynamostore.New(ctx, client, dynamostore.Options{TablePrefix: d.prefix})
	if err != nil {
		return nil, fmt.Errorf("dynamodb store: %w", err)
	}
	return st, nil
}
