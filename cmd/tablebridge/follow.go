package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
)

// followFlags are migrate's -follow flags (internal/migrate/follow.go
// explains the passes).
type followFlags struct {
	follow     bool
	interval   time.Duration
	margin     time.Duration
	sweepEvery int
	until      string
}

func (f *followFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.follow, "follow", false, "after the bulk copy, keep copying what changes on the source, pass after pass, until Ctrl-C (or -until), then run a final pass")
	fs.DurationVar(&f.interval, "follow-interval", 5*time.Second, "with -follow: pause between passes")
	fs.DurationVar(&f.margin, "follow-margin", migrate.DefaultMargin, "with -follow: each pass also copies what was written this long before the previous pass began, for clock skew and writes in flight on the source")
	fs.IntVar(&f.sweepEvery, "sweep-every", 10, "with -follow: compare keys to find deletes every this many passes (and always in the final pass)")
	fs.StringVar(&f.until, "until", "", "with -follow: idle ends the follow after a pass that copied nothing (the source saw no write for -follow-margin), with a final pass")
}

func (f *followFlags) validate(dryRun bool) error {
	switch {
	case !f.follow && (f.until != "" || f.interval != 5*time.Second || f.margin != migrate.DefaultMargin || f.sweepEvery != 10):
		return usageError("-until, -follow-interval, -follow-margin and -sweep-every need -follow")
	case f.follow && dryRun:
		return usageError("-follow and -dry-run do not go together")
	case f.until != "" && f.until != "idle":
		return usageError("unknown -until %q (idle)", f.until)
	case f.interval <= 0 || f.margin <= 0 || f.sweepEvery <= 0:
		return usageError("-follow-interval, -follow-margin and -sweep-every must be positive")
	}
	return nil
}

// options are the follow's options, stopped by the end of ctx (the first
// SIGINT or SIGTERM); nil without -follow.
func (f *followFlags) options(ctx context.Context) *migrate.FollowOptions {
	if !f.follow {
		return nil
	}
	return &migrate.FollowOptions{
		Stop:       ctx.Done(),
		Interval:   f.interval,
		Margin:     f.margin,
		SweepEvery: f.sweepEvery,
		UntilIdle:  f.until == "idle",
	}
}

// printPass prints one line per pass: what it did and the lag it leaves.
func printPass(w io.Writer, r migrate.PassReport) {
	kind := "pass"
	if r.Final {
		kind = "final pass"
	}
	swept := ""
	if r.Swept {
		swept = ", keys compared"
	}
	fmt.Fprintf(w, "%s %d: %d entities copied, %d deleted%s; lag %s (deletes %s)\n",
		kind, r.Pass, r.Copied, r.Deleted, swept, r.Lag.Round(time.Millisecond), r.DeleteLag.Round(time.Millisecond))
}
