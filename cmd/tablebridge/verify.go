package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/tablebridge/tablebridge/internal/migrate"
)

func init() {
	register("verify", "compare a migration's destination with its source, entity by entity (exit 1 on differences)", bulkCommand(verifyCmd))
}

// verifyCmd prints every difference to stdout, one per line, and a summary;
// progress goes to stderr so stdout stays a clean list. The exit status is 0
// when the sides match, 1 when they differ and 2 when verify could not
// tell (bad usage, unreadable side).
func verifyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("verify", "verify -from SOURCE (-to DEST | -store pebble|bolt -data DIR | -store dynamodb ...) [flags]")
	var (
		from          = fs.String("from", "", "source: a connection string or a SAS URL")
		dest          destFlags
		tables        = fs.String("tables", "", "comma-separated source tables to compare (default: all, and report tables only the destination has)")
		renames       renameFlag
		keepTimestamp = fs.String("keep-timestamp", "", "the -keep-timestamp name the migration used: compare it with the source Timestamp")
		maxDiffs      = fs.Int("max-diffs", 0, "list at most this many differences per table (0: all); the counts stay complete")
		parallel      = fs.Int("parallel", 4, "tables compared at once")
		progress      progressFlags
	)
	dest.register(fs, "to", "destination: a connection string or SAS URL (or -store)")
	dest.readOnly = true
	fs.Var(&renames, "rename", "the migration's renames, old:new; repeatable or comma-separated")
	progress.register(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *from == "" {
		return usageError("verify: -from is required")
	}
	if err := dest.validate(false); err != nil {
		return err
	}
	if err := progress.validate(); err != nil {
		return err
	}
	src, err := migrate.OpenEndpoint(*from, migrate.EndpointOptions{})
	if err != nil {
		return usageError("verify: -from: %v", err)
	}
	if err := src.Probe(ctx); err != nil {
		return &exitError{2, fmt.Errorf("verify: -from: %w", err)}
	}
	dst, closeDest, err := dest.open(ctx)
	if err != nil {
		return asStatus2(err)
	}
	defer closeDest()
	display := progress.open(stderr)
	res, err := migrate.Verify(ctx, migrate.VerifyOptions{
		Source:        src,
		Dest:          dst,
		Tables:        splitList(*tables),
		Rename:        renames.m,
		KeepTimestamp: *keepTimestamp,
		MaxDiffs:      *maxDiffs,
		Parallel:      *parallel,
		Progress:      display,
		Report:        func(d migrate.Difference) { fmt.Fprintln(stdout, d) },
	})
	display.Close()
	if err != nil {
		return &exitError{2, fmt.Errorf("verify: %w", err)}
	}
	printVerifySummary(stdout, res)
	if res.Differences > 0 {
		differing := 0
		for _, t := range res.Tables {
			if t.Differences > 0 {
				differing++
			}
		}
		return &exitError{1, fmt.Errorf("verify: %s in %d of %d tables", plural(res.Differences, "difference"), differing, len(res.Tables))}
	}
	return nil
}

// printVerifySummary writes a line per table and a total line whose
// figures are the sums of the lines above it.
func printVerifySummary(w io.Writer, res *migrate.VerifyResult) {
	var srcN, dstN int64
	for _, t := range res.Tables {
		srcN += t.SourceEntities
		dstN += t.DestEntities
		status := "match"
		if t.Differences > 0 {
			status = plural(t.Differences, "difference")
		}
		if t.OnlyInDest {
			fmt.Fprintf(w, "  %s: only in dest, %d entities: %s\n", t.Dest, t.DestEntities, status)
			continue
		}
		name := t.Source
		if t.Dest != t.Source {
			name += " -> " + t.Dest
		}
		fmt.Fprintf(w, "  %s: source %d, dest %d entities: %s\n", name, t.SourceEntities, t.DestEntities, status)
	}
	if res.Differences == 0 {
		verb := "match"
		if len(res.Tables) == 1 {
			verb = "matches"
		}
		fmt.Fprintf(w, "%s %s (%s)\n", plural(int64(len(res.Tables)), "table"), verb, plural(srcN, "entity"))
		return
	}
	fmt.Fprintf(w, "%d tables: source %d, dest %d entities: %s\n", len(res.Tables), srcN, dstN, plural(res.Differences, "difference"))
}

// plural writes n and the noun, in the plural unless n is 1.
func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(noun, "y"))
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// asStatus2 makes any error that has no status yet a status 2: verify
// keeps 1 for "the sides differ".
func asStatus2(err error) error {
	if _, ok := err.(*exitError); ok {
		return err
	}
	return &exitError{2, err}
}
