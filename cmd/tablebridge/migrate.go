package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/store"
)

func init() {
	register("migrate", "copy tables from Azure, Azurite or a tablebridge into a tablebridge endpoint or store, resumably", bulkCommand(migrateCmd))
}

// exitInterrupted is the status of a run stopped by SIGINT or SIGTERM, as
// shells report 128+SIGINT; the checkpoint lets it resume.
const exitInterrupted = 130

// bulkCommand runs cmd, one of the bulk commands (migrate, import, export,
// verify), on the process's stdout and stderr: interruptible, with tuneGC.
func bulkCommand(cmd func(ctx context.Context, args []string, stdout, stderr io.Writer) error) func(args []string) error {
	return func(args []string) error {
		ctx, stop := interruptContext()
		defer stop()
		tuneGC()
		return cmd(ctx, args, os.Stdout, os.Stderr)
	}
}

// tuneGC trades memory for throughput in serve and the bulk commands,
// unless GOGC says otherwise: their live heap is small (entities live in the
// store's mmap; a migration holds the pages in flight) and they allocate
// fast, so at the default GOGC=100 collection takes a large part of their
// CPU; 400 trades a few times the small live heap for fewer collections.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
}

// interruptContext ends on the first SIGINT or SIGTERM, so the run stops
// cleanly and writes its checkpoint. A second signal gets the default
// treatment and kills the process at once.
func interruptContext() (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

// copyFlags are the flags migrate and import share.
type copyFlags struct {
	tables        string
	renames       renameFlag
	keepTimestamp string
	dryRun        bool
	checkpoint    string
	restart       bool
	parallel      int
	writers       int
	rate          float64
	progress      progressFlags
}

func (c *copyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.tables, "tables", "", "comma-separated tables to copy (default: all)")
	fs.Var(&c.renames, "rename", "rename a table as old:new; repeatable or comma-separated")
	fs.StringVar(&c.keepTimestamp, "keep-timestamp", "", "store each entity's source Timestamp as an extra Edm.DateTime property with this name")
	fs.BoolVar(&c.dryRun, "dry-run", false, "read and count everything, write nothing")
	fs.StringVar(&c.checkpoint, "checkpoint", autoCheckpoint, "checkpoint file: resume from it if present, keep it current while running (\"\" for none; auto: a file per source and destination under $XDG_STATE_HOME/tablebridge, else ~/.local/state/tablebridge)")
	fs.BoolVar(&c.restart, "restart", false, "ignore an existing checkpoint and start over")
	fs.IntVar(&c.parallel, "parallel", 8, "scans running at once, across tables and PartitionKey ranges")
	fs.IntVar(&c.writers, "writers", 16, "transactions in flight at once")
	fs.Float64Var(&c.rate, "rate", 0, "at most this many entities per second (0: no limit)")
	c.progress.register(fs)
}

func (c *copyFlags) options() migrate.Options {
	return migrate.Options{
		Tables:        splitList(c.tables),
		Rename:        c.renames.m,
		KeepTimestamp: c.keepTimestamp,
		DryRun:        c.dryRun,
		Checkpoint:    c.checkpoint,
		Restart:       c.restart,
		Parallel:      c.parallel,
		Writers:       c.writers,
		Rate:          c.rate,
	}
}

func migrateCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", "migrate (-from SOURCE | -from-data DIR) (-to DEST | -store pebble|bolt -data DIR | -store dynamodb ...) [flags]")
	var (
		from   = fs.String("from", "", "source: a connection string or a SAS URL (Azure, Azurite, tablebridge)")
		dest   destFlags
		copies copyFlags
		ranges = fs.Int("ranges", 4, "PartitionKey ranges a large table is split into and read in parallel (1 for Cosmos DB sources and tablebridge tables on the unordered DynamoDB layout, which read every range whole)")
	)
	dest.register(fs, "to", "destination: a tablebridge connection string or SAS URL (or -store)")
	copies.register(fs)
	var follow followFlags
	follow.register(fs)
	var move moveFlags
	move.register(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := move.validate(fs, *from, &dest); err != nil {
		return err
	}
	if move.fromData != "" {
		if err := copies.progress.validate(); err != nil {
			return err
		}
		return move.run(ctx, &dest, copies, *ranges, stdout)
	}
	if err := follow.validate(copies.dryRun); err != nil {
		return err
	}
	if *from == "" {
		return usageError("migrate: -from is required (or -from-data, to move a data directory)")
	}
	if err := dest.validate(copies.dryRun); err != nil {
		return err
	}
	if err := copies.progress.validate(); err != nil {
		return err
	}
	src, err := migrate.OpenEndpoint(*from, migrate.EndpointOptions{})
	if err != nil {
		return usageError("migrate: -from: %v", err)
	}
	if err := src.Probe(ctx); err != nil {
		return fmt.Errorf("migrate: -from: %w", err)
	}
	opts := copies.options()
	opts.Source = src
	opts.Ranges = *ranges
	opts.Follow = follow.options(ctx)
	if !copies.dryRun {
		d, closeDest, err := dest.open(ctx)
		if err != nil {
			return err
		}
		defer closeDest()
		opts.Dest = d
	}
	return runCopy(ctx, "migrate", opts, copies, stdout)
}

// runCopy runs migrate.Migrate with a progress display and prints the
// summary; migrate and import share it.
func runCopy(ctx context.Context, cmd string, opts migrate.Options, copies copyFlags, stdout io.Writer) error {
	if opts.Checkpoint == autoCheckpoint {
		opts.Checkpoint = ""
		if !opts.DryRun {
			path, err := defaultCheckpoint(cmd, opts.Source.Describe(), opts.Dest.Describe())
			if err != nil {
				return fmt.Errorf("%s: %w", cmd, err)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
				return fmt.Errorf("%s: checkpoint directory: %w", cmd, err)
			}
			opts.Checkpoint = path
		}
	}
	if opts.Checkpoint != "" && !opts.DryRun {
		fmt.Fprintf(stdout, "checkpoint: %s\n", opts.Checkpoint)
	}
	progress := copies.progress.open(stdout)
	opts.Progress = progress
	runCtx := ctx
	if opts.Follow != nil {
		// The first SIGINT closes Follow.Stop (ctx.Done): the follow
		// ends with a final pass, which the signal must not cancel. A
		// second signal kills the process (interruptContext).
		runCtx = context.WithoutCancel(ctx)
		opts.Follow.Report = func(r migrate.PassReport) {
			// The bulk copy's display is over; pass lines follow it.
			progress.Close()
			printPass(stdout, r)
		}
	}
	res, err := migrate.Migrate(runCtx, opts)
	progress.Close()
	if res != nil {
		printCopySummary(stdout, res, opts.DryRun)
		if err == nil && allDone(res) && opts.Follow == nil {
			fmt.Fprintf(stdout, "%s: already complete (checkpoint %s); -restart to copy again\n", cmd, opts.Checkpoint)
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			hint := ""
			if opts.Checkpoint != "" && !opts.DryRun {
				hint = "; run the same command again to resume from " + opts.Checkpoint
			}
			return &exitError{exitInterrupted, fmt.Errorf("%s: interrupted%s", cmd, hint)}
		}
		return fmt.Errorf("%s: %w", cmd, err)
	}
	return nil
}

// allDone reports whether the checkpoint said every table was complete: the
// run copied nothing because an earlier one had copied everything.
func allDone(res *migrate.Result) bool {
	for _, t := range res.Tables {
		if !t.AlreadyDone {
			return false
		}
	}
	return len(res.Tables) > 0
}

func printCopySummary(w io.Writer, res *migrate.Result, dryRun bool) {
	verb := "copied"
	if dryRun {
		verb = "read (dry run, nothing written)"
	}
	for _, t := range res.Tables {
		name := t.Source
		if t.Dest != t.Source {
			name += " -> " + t.Dest
		}
		switch {
		case t.AlreadyDone:
			fmt.Fprintf(w, "  %s: already done (%d entities)\n", name, t.Resumed)
		case t.Resumed > 0:
			fmt.Fprintf(w, "  %s: %d entities %s, %d before resuming\n", name, t.Entities, verb, t.Resumed)
		default:
			fmt.Fprintf(w, "  %s: %d entities %s\n", name, t.Entities, verb)
		}
		if res.Passes > 0 {
			fmt.Fprintf(w, "  %s: following: %d entities copied, %d deleted\n", name, t.Followed, t.Deleted)
		}
	}
	rate := 0.0
	if secs := res.Elapsed.Seconds(); secs > 0 {
		rate = float64(res.Entities) / secs
	}
	fmt.Fprintf(w, "%d tables, %d entities %s in %s (%.0f entities/s)\n", len(res.Tables), res.Entities, verb, res.Elapsed.Round(time.Millisecond), rate)
	if res.Passes > 0 {
		fmt.Fprintf(w, "followed the source for %d passes\n", res.Passes)
	}
}

// destFlags choose a destination (or, for export, a source): an endpoint
// by connection string or SAS URL, or a store opened directly.
type destFlags struct {
	cmd       string // the subcommand, named in the data directory's pid file
	readOnly  bool   // the command only reads: a data directory must exist
	name      string // the endpoint flag: "to" or "from"
	endpoint  string
	storeKind string
	dataDir   string
	account   string
	dynamo    dynamoFlags
}

func (d *destFlags) register(fs *flag.FlagSet, name, usage string) {
	d.cmd, d.name = fs.Name(), name
	fs.StringVar(&d.endpoint, name, "", usage)
	fs.StringVar(&d.storeKind, "store", "", "use a store directly instead of an endpoint: pebble or bolt (the engines of a tablebridge serve data directory), or dynamodb")
	fs.StringVar(&d.dataDir, "data", "", "with -store pebble or bolt: the data directory of tablebridge serve; stop the server first")
	fs.StringVar(&d.account, "account", auth.DevStoreAccountName, "with -store: the account whose tables to use")
	d.dynamo.register(fs)
}

func (d *destFlags) validate(optional bool) error {
	switch {
	case d.endpoint != "" && d.storeKind != "":
		return usageError("give -%s or -store, not both", d.name)
	case d.endpoint == "" && d.storeKind == "" && !optional:
		return usageError("-%s or -store is required", d.name)
	case (d.storeKind == enginePebble || d.storeKind == engineBolt) && d.dataDir == "":
		return usageError("-store %s needs -data DIR", d.storeKind)
	case d.storeKind != "" && d.storeKind != enginePebble && d.storeKind != engineBolt && d.storeKind != "dynamodb":
		return usageError("unknown -store %q (pebble, bolt or dynamodb)", d.storeKind)
	}
	return nil
}

// storeOrEndpoint is what both kinds offer.
type storeOrEndpoint interface {
	migrate.Source
	migrate.Dest
}

// open opens the endpoint or the store; the returned func closes it.
func (d *destFlags) open(ctx context.Context) (storeOrEndpoint, func(), error) {
	if d.endpoint != "" {
		ep, err := migrate.OpenEndpoint(d.endpoint, migrate.EndpointOptions{})
		if err != nil {
			return nil, nil, usageError("-%s: %v", d.name, err)
		}
		if err := ep.Probe(ctx); err != nil {
			return nil, nil, fmt.Errorf("%s: -%s: %w", d.cmd, d.name, err)
		}
		return ep, func() {}, nil
	}
	var (
		st   store.Store
		desc string
		err  error
	)
	switch d.storeKind {
	case enginePebble, engineBolt:
		ds, err := openDataDir(d.dataDir, d.storeKind, d.cmd, d.readOnly)
		if err != nil {
			return nil, nil, fmt.Errorf("%w (or give the server's endpoint with -%s)", err, d.name)
		}
		st, desc = ds, ds.describe()
	case "dynamodb":
		ds, err := d.dynamo.open(ctx)
		if err != nil {
			return nil, nil, err
		}
		st, desc = ds, "dynamodb "+d.dynamo.describe()
	}
	sio, err := migrate.NewStoreIO(st, d.account, desc, nil)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return sio, func() { st.Close() }, nil
}

// renameFlag collects -rename old:new pairs.
type renameFlag struct{ m map[string]string }

func (r *renameFlag) String() string {
	var parts []string
	for k, v := range r.m {
		parts = append(parts, k+":"+v)
	}
	return strings.Join(parts, ",")
}

func (r *renameFlag) Set(s string) error {
	for _, pair := range splitList(s) {
		from, to, ok := strings.Cut(pair, ":")
		from, to = strings.TrimSpace(from), strings.TrimSpace(to)
		if !ok || from == "" || to == "" {
			return fmt.Errorf("want old:new, got %q", pair)
		}
		if r.m == nil {
			r.m = map[string]string{}
		}
		for k := range r.m {
			if strings.EqualFold(k, from) {
				return fmt.Errorf("table %q renamed twice", from)
			}
		}
		r.m[from] = to
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// progressFlags choose the progress display.
type progressFlags struct {
	mode     string
	interval time.Duration
}

func (p *progressFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.mode, "progress", "auto", "progress display: bars (per table, with rate and ETA), log (a line per table every -progress-interval), none, or auto (bars on a terminal, else log)")
	fs.DurationVar(&p.interval, "progress-interval", 10*time.Second, "how often -progress log reports")
}

// open starts the display on w: bars when w is a terminal (or -progress
// bars), plain log lines otherwise.
func (p *progressFlags) open(w io.Writer) migrate.Progress {
	mode := p.mode
	f, isFile := w.(*os.File)
	if mode == "auto" {
		mode = "log"
		if isFile && term.IsTerminal(int(f.Fd())) {
			mode = "bars"
		}
	}
	switch mode {
	case "bars":
		width := func() int { return 80 }
		if isFile {
			width = func() int {
				if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
					return w
				}
				return 80
			}
		}
		return migrate.NewBarProgress(w, width)
	case "none":
		return migrate.NoProgress{}
	}
	return migrate.NewLogProgress(w, p.interval)
}

func (p *progressFlags) validate() error {
	switch p.mode {
	case "auto", "bars", "log", "none":
		return nil
	}
	return usageError("unknown -progress %q (auto, bars, log or none)", p.mode)
}
