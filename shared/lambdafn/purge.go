package lambdafn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tablebridge/tablebridge/shared/deploy"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// purgeMargin is the time a purge invocation leaves itself before Lambda's
// deadline to stop cleanly: a purge stopped by its deadline resumes at the
// next invocation, but one that Lambda kills keeps its lease until it runs
// out.
const purgeMargin = 10 * time.Second

// MainPurge runs the purge function. Delete Table only marks the table
// deleted in the catalog; this function, invoked by an EventBridge
// schedule, deletes the entities of deleted tables (and the DynamoDB
// tables of deleted placements, an earlier release's per-table tables)
// until its invocation's deadline nears. Why a schedule and not a queue: the catalog's purge items
// are already a durable list of the work, written in the same transaction
// as the delete, so a lost message or a failed send cannot leak a table's
// items, and a purge a minute late costs nothing, since the table is gone
// for every client at once.
func MainPurge() error {
	api := os.Getenv(envRuntimeAPI)
	if api == "" {
		return fmt.Errorf("lambdafn: %s is not set: this program is a Lambda bootstrap", envRuntimeAPI)
	}
	log := slog.New(NewLogHandler(slog.NewJSONHandler(os.Stdout, nil))).With("function", deploy.PurgeFunctionName)
	purge, err := setupPurge(os.Getenv)
	if err != nil {
		if rerr := reportInitError(api, err); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return err
	}
	lambda.Start(func(ctx context.Context) (dynamostore.PurgeReport, error) {
		rep, err := purge(ctx)
		log.LogAttrs(ctx, slog.LevelInfo, "purge", slog.Int("tables", rep.Tables), slog.Int("items", rep.Items),
			slog.Int("pending", rep.Pending), slog.Any("err", err))
		return rep, err
	})
	return nil
}

// setupPurge builds the store of the configuration and returns the handler
// of one purge invocation.
func setupPurge(getenv func(string) string) (func(context.Context) (dynamostore.PurgeReport, error), error) {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	awsCfg, err := dynamostore.LoadAWSConfig(ctx, cfg.Store)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, awsCfg, cfg)
	if err != nil {
		return nil, err
	}
	return purgeHandler(st), nil
}

// purgeHandler is one purge invocation on st: it purges until purgeMargin
// before the invocation's deadline.
func purgeHandler(st *dynamostore.Store) func(context.Context) (dynamostore.PurgeReport, error) {
	return func(ctx context.Context) (dynamostore.PurgeReport, error) {
		if deadline, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline.Add(-purgeMargin))
			defer cancel()
		}
		return st.Purge(ctx)
	}
}
