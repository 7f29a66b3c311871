// Command events writes API Gateway test events
// (<dir>/<function>/<operation>.json), freshly signed, for sam local
// invoke: make events runs it into build/events, make events-fixtures
// into the tracked events/. It is test tooling, so it lives apart from the
// tablebridge command and the function binaries.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
)

func main() {
	err := runEvents(os.Args[1:])
	switch {
	case errors.Is(err, flag.ErrHelp):
		// The flag package printed the usage.
	case err != nil:
		fmt.Fprintln(os.Stderr, "events:", err)
		os.Exit(1)
	}
}

// eventsFixtureDate is when the tracked events/ fixtures are signed: a fixed
// date, so regenerating them (make events-fixtures) changes no byte unless
// the samples changed.
var eventsFixtureDate = time.Date(2026, 11, 21, 2, 21, 25, 0, time.UTC)

// runEvents writes the fixtures for `sam local invoke -e`. Shared Key
// signatures are only good for 15 minutes around x-ms-date, so run it
// right before invoking (make events).
func runEvents(args []string) error {
	fs := flag.NewFlagSet("events", flag.ContinueOnError)
	dir := fs.String("dir", "build/events", "directory to write the events to")
	fixed := fs.Bool("fixture-date", false, "sign at the fixed date of the repository's events/ fixtures instead of now (the signatures are then long expired)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	// Whole seconds: x-ms-date has no more, and the fixture stays reproducible.
	at := time.Now().Truncate(time.Second)
	if *fixed {
		at = eventsFixtureDate
	}
	return writeEvents(*dir, at, os.Stdout)
}

func writeEvents(dir string, now time.Time, out io.Writer) error {
	samples, err := gatewayevent.Samples(now)
	if err != nil {
		return err
	}
	for _, s := range samples {
		b, err := gatewayevent.MarshalEvent(s.Event)
		if err != nil {
			return fmt.Errorf("events: %s: %w", s.File(), err)
		}
		path := filepath.Join(dir, filepath.FromSlash(s.File()))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "%-50s %s → %d\n", path, s.Operation, s.WantStatus)
	}
	fmt.Fprintf(out, "signed at %s with the emulator key of devstoreaccount1; valid for 15 minutes.\n",
		now.UTC().Format(time.RFC3339))
	fmt.Fprintf(out, "invoke in this order, e.g.: sam local invoke CreateTableFunction -e %s\n",
		filepath.Join(dir, "createtable", "createtable.json"))
	return nil
}
