package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
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
	shared   string
	// timeout bounds each DynamoDB request, retries included.
	timeout time.Duration
	// moveSettle is dynamodb move-to-shared's -settle.
	moveSettle time.Duration
	// purgeEvery, set by serve alone, purges deleted tables in the
	// background; the one-shot commands (migrate, dynamodb) leave it zero.
	purgeEvery time.Duration
}

func (d *dynamoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.endpoint, "dynamodb-endpoint", "", "DynamoDB endpoint URL, e.g. http://127.0.0.1:8000 for DynamoDB Local (default: AWS)")
	fs.StringVar(&d.region, "dynamodb-region", "", "AWS region (default: the AWS config chain, else us-east-1)")
	fs.StringVar(&d.prefix, "table-prefix", "tablebridge-", "prefix of the deployment's DynamoDB tables (the catalog, the shared table)")
	fs.StringVar(&d.shared, "shared-table", "", "the DynamoDB table that holds every table's entities (default: the table prefix + \"entities\")")
	fs.DurationVar(&d.timeout, "dynamodb-timeout", 10*time.Second, "longest wait for one DynamoDB request, retries included")
}

func (d *dynamoFlags) describe() string {
	where := "AWS"
	if d.endpoint != "" {
		where = d.endpoint
	}
	return fmt.Sprintf("%s, table prefix %q", where, d.prefix)
}

func (d *dynamoFlags) open(ctx context.Context) (store.Store, error) {
	st, err := d.openDynamo(ctx)
	if err != nil {
		return nil, err
	}
	return st, nil
}

// purgeEvery is how often serve looks for deleted tables to purge: the
// server purges the shared layout's deleted tables itself.
const purgeEvery = 10 * time.Second

func (d *dynamoFlags) openDynamo(ctx context.Context) (*dynamostore.Store, error) {
	if d.endpoint != "" {
		// A DynamoDB Local that is not running fails now, not after the
		// SDK's retries.
		if err := migrate.ProbeURL(ctx, d.endpoint); err != nil {
			return nil, fmt.Errorf("-dynamodb-endpoint: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	client, err := dynamostore.NewClient(ctx, dynamostore.ClientOptions{Endpoint: d.endpoint, Region: d.region})
	if err != nil {
		return nil, err
	}
	// dynamostore.Settings builds the Options the functions use too: the
	// catalog is re-created only on a local endpoint (DynamoDB Local
	// restarted in memory), never on AWS, where it is the stack's.
	st, err := dynamostore.New(ctx, client, dynamostore.Settings{Endpoint: d.endpoint, TablePrefix: d.prefix,
		SharedTable: d.shared, RequestTimeout: d.timeout, MoveSettle: d.moveSettle,
		PurgeEvery: d.purgeEvery,
		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil))}.Options())
	if err != nil {
		return nil, fmt.Errorf("dynamodb store: %w", err)
	}
	return st, nil
}
