package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// dynamoFlags configure -store dynamodb: the flags are read straight into
// the store's Options, which set its defaults and what derives from them
// (a local endpoint creates the catalog and the shared table) as they do
// for the functions. With no endpoint the standard AWS credential and
// region chain applies (environment, shared config, SSO, instance or task
// role). The commands set the rest: serve PurgeEvery, move-to-shared and
// restore-table MoveSettle (-settle).
type dynamoFlags struct{ dynamostore.Options }

func (d *dynamoFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&d.Endpoint, "dynamodb-endpoint", "", "DynamoDB endpoint URL, e.g. http://127.0.0.1:8000 for DynamoDB Local (default: AWS)")
	fs.StringVar(&d.Region, "dynamodb-region", "", "AWS region (default: the AWS config chain, else us-east-1)")
	fs.StringVar(&d.TablePrefix, "table-prefix", "tablebridge-", "prefix of the deployment's DynamoDB tables (the catalog, the shared table)")
	fs.StringVar(&d.SharedTable, "shared-table", "", "the DynamoDB table that holds every table's entities (default: the table prefix + \"entities\")")
	fs.DurationVar(&d.RequestTimeout, "dynamodb-timeout", dynamostore.DefaultRequestTimeout, "longest wait for one DynamoDB request, retries included")
}

func (d *dynamoFlags) describe() string {
	where := "AWS"
	if d.Endpoint != "" {
		where = d.Endpoint
	}
	return fmt.Sprintf("%s, table prefix %q", where, d.TablePrefix)
}

// purgeEvery is how often serve looks for deleted tables to purge: the
// server purges them itself.
const purgeEvery = 10 * time.Second

// open opens the store the flags describe, its background purge (if any)
// reporting to stderr.
func (d *dynamoFlags) open(ctx context.Context) (*dynamostore.Store, error) {
	if d.Endpoint != "" {
		// A DynamoDB Local that is not running fails now, not after the
		// SDK's retries.
		if err := migrate.ProbeURL(ctx, d.Endpoint); err != nil {
			return nil, fmt.Errorf("-dynamodb-endpoint: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	opts := d.Options
	opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	st, err := dynamostore.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("dynamodb store: %w", err)
	}
	return st, nil
}
