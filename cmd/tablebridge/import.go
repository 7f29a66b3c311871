package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tablebridge/tablebridge/internal/migrate"
)

func init() {
	register("import", "load tables from export files (newline-delimited JSON, gzip or not) into a tablebridge endpoint or store", bulkCommand(importCmd))
}

// importCmd copies export files into a destination with the migration
// engine, so it batches, retries, resumes from its checkpoint and reports
// progress the same way migrate does.
func importCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("import", "import -in FILES|DIR (-to DEST | -store pebble|bolt -data DIR | -store dynamodb ...) [flags]")
	var (
		in     = fs.String("in", "", "comma-separated export files or directories (every *.ndjson, *.jsonl and *.gz inside)")
		dest   destFlags
		copies copyFlags
	)
	dest.register(fs, "to", "destination: a tablebridge connection string or SAS URL (or -store)")
	copies.register(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *in == "" {
		return usageError("import: -in is required")
	}
	if err := dest.validate(copies.dryRun); err != nil {
		return err
	}
	if err := copies.progress.validate(); err != nil {
		return err
	}
	paths, err := exportFiles(splitList(*in))
	if err != nil {
		return usageError("import: %v", err)
	}
	src, err := migrate.NewFileSource(paths)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	defer src.Close()
	opts := copies.options()
	opts.Source = src
	if !copies.dryRun {
		d, closeDest, err := dest.open(ctx)
		if err != nil {
			return err
		}
		defer closeDest()
		opts.Dest = d
	}
	return runCopy(ctx, "import", opts, copies, stdout)
}

// exportFiles expands directories into the export files they hold, sorted.
func exportFiles(args []string) ([]string, error) {
	var paths []string
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			paths = append(paths, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var found []string
		for _, e := range entries {
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") && isExportFile(e.Name()) {
				found = append(found, filepath.Join(a, e.Name()))
			}
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s holds no .ndjson, .jsonl or .gz files", a)
		}
		sort.Strings(found)
		paths = append(paths, found...)
	}
	return paths, nil
}
