package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tablebridge/tablebridge/internal/loadgen"
)

func init() {
	register("bench", "load-test an Azure Table endpoint (tablebridge, Azurite, ...), or DynamoDB directly as a baseline: ops/s and p50/p99 per phase", runBench)
}

func runBench(args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return bench(ctx, args, os.Stdout, os.Stderr)
}

// bench parses the flags, runs the benchmark and writes the report to out;
// progress goes to progress. It fails when any operation failed, so a
// script notices.
func bench(ctx context.Context, args []string, out, progress io.Writer) error {
	cfg, asJSON, err := parseBenchFlags(args, out)
	if err != nil {
		return err
	}
	report, runErr := loadgen.Run(ctx, cfg, progress)
	if report != nil {
		write := report.WriteText
		if asJSON {
			write = report.WriteJSON
		}
		if err := write(out); err != nil {
			return err
		}
	}
	if runErr != nil {
		return fmt.Errorf("bench: %w", runErr)
	}
	if report.Failed() {
		return errors.New("bench: some operations failed (see the report)")
	}
	return nil
}

func parseBenchFlags(args []string, output io.Writer) (loadgen.Config, bool, error) {
	cfg := loadgen.DefaultConfig()
	fs := newFlagSet("bench", "bench [-endpoint URL | -connection-string CS | -direct-dynamodb URL] [flags]")
	connStr := fs.String("connection-string", "", "Azure Storage connection string (instead of -endpoint, -account and -key); UseDevelopmentStorage=true works")
	fs.StringVar(&cfg.Endpoint, "endpoint", cfg.Endpoint, "table endpoint URL, path-style for emulators")
	fs.StringVar(&cfg.Account, "account", cfg.Account, "account name")
	fs.StringVar(&cfg.Key, "key", cfg.Key, "account key, base64 (the default is the emulator's well-known public key)")
	fs.StringVar(&cfg.DynamoDBEndpoint, "direct-dynamodb", "", "DynamoDB endpoint URL (e.g. DynamoDB Local): run the same phases as plain aws-sdk-go-v2 DynamoDB calls, the baseline for tablebridge's overhead")
	fs.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients")
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "length of each phase (with -ops, an upper bound; 0 for none)")
	fs.Int64Var(&cfg.Ops, "ops", 0, "operations per phase (insert: entities, get: reads, query: partition scans, batch: transactions)")
	phases := fs.String("phases", "insert,get,query,batch", "comma-separated phases, run in this order")
	fs.IntVar(&cfg.EntitySize, "entity-size", cfg.EntitySize, "entity size in bytes of JSON (10 properties covering all 8 Edm types; the minimum is about 400)")
	fs.IntVar(&cfg.PartitionSize, "partition-size", cfg.PartitionSize, "rows per partition; the query phase scans whole partitions of this size")
	fs.IntVar(&cfg.QueryPartitions, "query-partitions", cfg.QueryPartitions, "partitions in the seed data set read by query (and by get without an insert phase)")
	fs.IntVar(&cfg.BatchSize, "batch-size", cfg.BatchSize, "entities per $batch transaction (at most 100)")
	fs.StringVar(&cfg.TablePrefix, "table", cfg.TablePrefix, "prefix of the table the run creates (8 hex digits are appended)")
	fs.BoolVar(&cfg.KeepTable, "keep-table", false, "do not delete the table after the run")
	fs.DurationVar(&cfg.RequestTimeout, "timeout", cfg.RequestTimeout, "timeout of each HTTP request")
	fs.Int64Var(&cfg.Seed, "seed", 0, "seed for key choice and entity content (0: from the clock)")
	fs.BoolVar(&cfg.AllowRemote, "allow-remote", false, "permit a non-loopback endpoint (refused by default: load only on loopback)")
	asJSON := fs.Bool("json", false, "write the report as JSON")
	if err := parseFlags(fs, args, output); err != nil {
		return cfg, false, err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *connStr != "" {
		if set["endpoint"] || set["account"] || set["key"] {
			return cfg, false, usageError("bench: -connection-string and -endpoint/-account/-key are exclusive")
		}
		info, err := loadgen.ParseConnectionString(*connStr)
		if err != nil {
			return cfg, false, usageError("bench: %w", err)
		}
		cfg.Endpoint, cfg.Account, cfg.Key = info.Endpoint, info.Account, info.Key
	}
	if *connStr != "" || set["endpoint"] || set["account"] || set["key"] {
		if set["direct-dynamodb"] {
			return cfg, false, usageError("bench: -direct-dynamodb and -connection-string/-endpoint/-account/-key are exclusive")
		}
	}
	if set["direct-dynamodb"] && strings.TrimSpace(cfg.DynamoDBEndpoint) == "" {
		return cfg, false, usageError("bench: -direct-dynamodb needs a URL")
	}
	if set["ops"] && !set["duration"] {
		// -ops alone means exactly that many operations, however long.
		cfg.Duration = 0
	}
	list, err := loadgen.ParsePhases(*phases)
	if err != nil {
		return cfg, false, usageError("bench: %w", err)
	}
	cfg.Phases = list
	cfg.Endpoint = strings.TrimSpace(cfg.Endpoint)
	cfg.DynamoDBEndpoint = strings.TrimSpace(cfg.DynamoDBEndpoint)
	return cfg, *asJSON, nil
}
