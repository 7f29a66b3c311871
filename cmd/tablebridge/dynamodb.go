package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/shared/auth"
)

func init() {
	register("dynamodb", "DynamoDB store administration: add-index gives tables created without it the order index", bulkCommand(dynamodbCmd))
}

func dynamodbCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "add-index":
		return addIndexCmd(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		return addIndexCmd(ctx, args, stdout, stderr) // its usage, the only subcommand's
	}
	return usageError("dynamodb: want the add-index subcommand (see tablebridge dynamodb -h)")
}

// addIndexCmd converts tables to the ordered layout (see dynamostore's
// AddOrderIndex): it backfills the index attributes on entities written
// without them, adds the index and waits until DynamoDB has built it.
func addIndexCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dynamodb add-index", "dynamodb add-index [-dynamodb-endpoint URL] [-table-prefix P] [-account A] [-tables t1,t2]\n\n"+
		"Run it once every server writing to the tables runs a version that writes the index attributes.")
	var dyn dynamoFlags
	dyn.register(fs)
	account := fs.String("account", auth.DevStoreAccountName, "the account whose tables to convert")
	tables := fs.String("tables", "", "comma-separated tables to convert (default: every table of the account)")
	wait := fs.Duration("wait", 2*time.Hour, "how long to wait for DynamoDB to build each index")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	st, err := dyn.openDynamo(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	sio, err := migrate.NewStoreIO(st, *account, "dynamodb "+dyn.describe(), nil)
	if err != nil {
		return err
	}
	names, err := migrate.SelectTables(ctx, sio, splitList(*tables))
	if err != nil {
		return fmt.Errorf("dynamodb add-index: %w", err)
	}
	for _, name := range names {
		tctx, cancel := context.WithTimeout(ctx, *wait)
		start := time.Now()
		rep, err := st.AddOrderIndex(tctx, *account, name)
		cancel()
		if err != nil {
			return fmt.Errorf("dynamodb add-index: table %s: %w", name, err)
		}
		state := "index existed"
		if rep.Created {
			state = "index added"
		}
		fmt.Fprintf(stdout, "%s (%s): %d items read, %d entities backfilled, %s, %v\n",
			name, rep.Table, rep.Scanned, rep.Backfilled, state, time.Since(start).Round(time.Millisecond))
	}
	return nil
}
