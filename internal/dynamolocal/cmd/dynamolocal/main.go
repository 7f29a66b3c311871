// Command dynamolocal starts one in-memory DynamoDB Local, prints its
// endpoint and keeps it running until interrupted, so make test can share one
// instance across every test binary:
//
//	dynamolocal -endpoint-file .tools/dynamodb.endpoint &
//	TABLEBRIDGE_DYNAMODB_ENDPOINT=$(cat .tools/dynamodb.endpoint) go test ./...
//
// The endpoint file appears (atomically) only once the instance answers, and
// is removed on exit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "dynamolocal:", err)
		os.Exit(1)
	}
}

// run serves until ctx ends or DynamoDB Local dies.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("dynamolocal", flag.ContinueOnError)
	endpointFile := fs.String("endpoint-file", "", "write the endpoint URL to this file once DynamoDB Local answers")
	if err := fs.Parse(args); err != nil {
		return err
	}
	inst, err := dynamolocal.Start(ctx)
	if err != nil {
		if errors.Is(err, dynamolocal.ErrNotInstalled) {
			return fmt.Errorf("%w (run `make tools`)", err)
		}
		return err
	}
	defer inst.Stop()

	if *endpointFile != "" {
		if err := writeAtomically(*endpointFile, inst.Endpoint+"\n"); err != nil {
			return err
		}
		defer os.Remove(*endpointFile)
	}
	fmt.Fprintln(stdout, inst.Endpoint)

	select {
	case <-ctx.Done():
		return nil
	case <-inst.Done():
		return fmt.Errorf("DynamoDB Local exited unexpectedly; output:\n%s", inst.Output())
	}
}

// writeAtomically writes through a temporary file and a rename, so a reader
// polling for the file never sees it half written.
func writeAtomically(path, content string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".endpoint-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(content); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}
