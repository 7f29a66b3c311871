package main

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
)

func init() {
	register("export", "write tables to newline-delimited JSON files that keep every Edm type (optionally gzip)", bulkCommand(exportCmd))
}

// exportCmd writes one file per table (see internal/migrate's export format).
// A file appears under its final name only once complete: it is written
// to a temporary name and renamed.
func exportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", "export (-from SOURCE | -store pebble|bolt -data DIR | -store dynamodb ...) -out DIR|FILE [flags]")
	var (
		src      destFlags
		tables   = fs.String("tables", "", "comma-separated tables to export (default: all)")
		out      = fs.String("out", "", "output directory (one <table>.ndjson[.gz] per table), or a file ending in .ndjson, .jsonl or .gz for a single table")
		gz       = fs.Bool("gzip", false, "gzip the files (implied by an -out file ending in .gz)")
		parallel = fs.Int("parallel", 4, "tables exported at once")
		progress progressFlags
	)
	src.register(fs, "from", "source: a connection string or a SAS URL (or -store)")
	src.readOnly = true
	progress.register(fs)
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if *out == "" {
		return usageError("export: -out is required")
	}
	if err := src.validate(false); err != nil {
		return err
	}
	if err := progress.validate(); err != nil {
		return err
	}
	single := isExportFile(*out)
	if strings.HasSuffix(*out, ".gz") {
		*gz = true
	}
	source, closeSource, err := src.open(ctx)
	if err != nil {
		return err
	}
	defer closeSource()
	names, err := migrate.SelectTables(ctx, source, splitList(*tables))
	if err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if single && len(names) != 1 {
		return usageError("export: -out %s is a file, but %d tables are selected; give a directory or one table with -tables", *out, len(names))
	}
	paths := make(map[string]string, len(names))
	for _, n := range names {
		if single {
			paths[n] = *out
			continue
		}
		ext := ".ndjson"
		if *gz {
			ext += ".gz"
		}
		paths[n] = filepath.Join(*out, n+ext)
	}
	if !single {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("export: %w", err)
		}
	}
	display := progress.open(stdout)
	started := time.Now()
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		total int64
		sem   = make(chan struct{}, max(*parallel, 1))
	)
	for _, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			count, err := exportFile(ctx, source, n, paths[n], *gz, display)
			mu.Lock()
			defer mu.Unlock()
			total += count
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", n, err))
			}
		}()
	}
	wg.Wait()
	display.Close()
	if len(errs) > 0 {
		if ctx.Err() != nil {
			return &exitError{exitInterrupted, fmt.Errorf("export: interrupted; no partial file was kept")}
		}
		return fmt.Errorf("export: %w", errs[0])
	}
	for _, n := range names {
		fmt.Fprintf(stdout, "  %s -> %s\n", n, paths[n])
	}
	fmt.Fprintf(stdout, "%d tables, %d entities exported in %s\n", len(names), total, time.Since(started).Round(time.Millisecond))
	return nil
}

func isExportFile(path string) bool {
	for _, ext := range []string{".ndjson", ".jsonl", ".gz"} {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}

// exportFile writes one table to path through a temporary file.
func exportFile(ctx context.Context, src migrate.Source, table, path string, gz bool, progress migrate.Progress) (int64, error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	var w io.Writer = tmp
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(tmp)
		w = zw
	}
	n, err := migrate.ExportTable(ctx, src, table, w, migrate.Backoff{}, progress)
	if err == nil && zw != nil {
		err = zw.Close()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return n, err
}
