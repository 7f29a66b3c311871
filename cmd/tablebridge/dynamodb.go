package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

func init() {
	register("dynamodb", "DynamoDB store administration: move-to-shared moves the tables of earlier releases into the shared table; restore-table copies one table back from a point-in-time restore", bulkCommand(dynamodbCmd))
}

func dynamodbCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) > 0 && args[0] == "move-to-shared":
		return moveToSharedCmd(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && args[0] == "restore-table":
		return restoreTableCmd(ctx, args[1:], stdout, stderr)
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help"):
		fmt.Fprintln(stdout, "usage: tablebridge dynamodb move-to-shared|restore-table [flags]\n\n"+
			"move-to-shared  move the tables of earlier releases (a DynamoDB table each) into the shared table\n"+
			"restore-table   copy one table back from a point-in-time restore of the shared table\n\n"+
			"tablebridge dynamodb <subcommand> -h shows its flags.")
		return &exitError{0, errShown}
	}
	return usageError("dynamodb: want the move-to-shared or restore-table subcommand (see tablebridge dynamodb move-to-shared -h, restore-table -h)")
}

// paceFlags set the pace and the progress display of a copy between
// DynamoDB tables (move-to-shared, restore-table).
type paceFlags struct {
	rate     int
	settle   time.Duration
	progress progressFlags
}

func (c *paceFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&c.rate, "rate", dynamostore.DefaultCopyRate, "items a second to copy, and then to verify (each item also writes the order index: twice the write units); never more than one DynamoDB partition's capacity goes to one key")
	fs.DurationVar(&c.settle, "settle", dynamostore.DefaultMoveSettle, "wait after freezing a table's writes before copying into it: longer than any server keeps a look-up (1 s) plus the longest write in flight (29 s on AWS)")
	c.progress.register(fs)
}

// start checks the flags of the command cmd, gives the store -settle, and
// opens the progress display on stderr.
func (c *paceFlags) start(cmd string, dyn *dynamoFlags, stderr io.Writer) (dynamostore.CopyOptions, func() error, error) {
	if err := c.progress.validate(); err != nil {
		return dynamostore.CopyOptions{}, nil, err
	}
	if c.rate <= 0 {
		return dynamostore.CopyOptions{}, nil, usageError("%s: -rate must be positive", cmd)
	}
	dyn.MoveSettle = c.settle
	progress := c.progress.open(stderr)
	return dynamostore.CopyOptions{Rate: c.rate, Progress: progress}, progress.Close, nil
}

// moveToSharedCmd moves an account's placements (tables of earlier releases
// in DynamoDB tables of their own) into the shared table (dynamostore's MoveToShared), one table at a time,
// verified; a table already there is left alone, so running it again
// resumes an interrupted move.
func moveToSharedCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dynamodb move-to-shared", "dynamodb move-to-shared [-dynamodb-endpoint URL] [-table-prefix P] [-shared-table T] [-account A] [-tables t1,t2] [-rate N]\n\n"+
		"Run it once every server and function of the deployment has the shared table configured.\n"+
		"Writes to a table answer 503 ServerBusy (the SDKs retry) from its freeze until it is switched:\n"+
		"-settle, then the copy and its verification. Reads never stop.")
	var dyn dynamoFlags
	dyn.register(fs)
	account := fs.String("account", auth.DevStoreAccountName, "the account whose tables to move")
	tables := fs.String("tables", "", "comma-separated tables to move (default: every table of the account)")
	var pace paceFlags
	pace.register(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	opts, closeProgress, err := pace.start("dynamodb move-to-shared", &dyn, stderr)
	if err != nil {
		return err
	}
	defer closeProgress()
	st, names, err := dyn.openTables(ctx, *account, *tables)
	if err != nil {
		return fmt.Errorf("dynamodb move-to-shared: %w", err)
	}
	defer st.Close()
	for _, name := range names {
		start := time.Now()
		rep, err := st.MoveToShared(ctx, *account, name, opts)
		if err != nil {
			return fmt.Errorf("dynamodb move-to-shared: table %s: %w", name, err)
		}
		if !rep.Moved {
			fmt.Fprintf(stdout, "%s: in the shared table already\n", name)
			continue
		}
		fmt.Fprintf(stdout, "%s (%s): %d items copied and verified, writes refused for %v, %v in all; the old table goes to the purge\n",
			name, rep.Physical, rep.Items, rep.Frozen.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// openTables opens the store of a dynamodb subcommand and selects the
// account's tables it works on: those named in the comma-separated list
// (matched as export matches them), or every table.
func (d *dynamoFlags) openTables(ctx context.Context, account, list string) (*dynamostore.Store, []string, error) {
	st, err := d.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	sio, err := migrate.NewStoreIO(st, account, "dynamodb "+d.describe(), nil)
	if err == nil {
		var names []string
		if names, err = migrate.SelectTables(ctx, sio, splitList(list)); err == nil {
			return st, names, nil
		}
	}
	st.Close()
	return nil, nil, err
}
