package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tablebridge/tablebridge/shared/lambdafn"
)

func init() {
	register("events", "write API Gateway test events (events/<function>/<operation>.json), freshly signed", runEvents)
}

// runEvents writes the fixtures for `sam local invoke -e`. Shared Key
// signatures are only good for 15 minutes around x-ms-date, so run it
// right before invoking (make events).
func runEvents(args []string) error {
	fs := flag.NewFlagSet("events", flag.ContinueOnError)
	dir := fs.String("dir", "events", "directory to write the events to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("events: unexpected argument %q", fs.Arg(0))
	}
	// Whole seconds: x-ms-date has no more, and the fixture stays reproducible.
	return writeEvents(*dir, time.Now().Truncate(time.Second), os.Stdout)
}

func writeEvents(dir string, now time.Time, out io.Writer) error {
	samples, err := lambdafn.Samples(now)
	if err != nil {
		return err
	}
	for _, s := range samples {
		b, err := lambdafn.MarshalEvent(s.Event)
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
	fmt.Fprintln(out, "invoke in this order, e.g.: sam local invoke CreateTableFunction -e events/createtable/createtable.json")
	return nil
}
