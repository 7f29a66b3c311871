// Command dynamolocal starts one in-memory DynamoDB Local, prints its
// endpoint and keeps it running until interrupted, so make test can share one
// instance across every test binary:
//
//	dynamolocal -endpoint-file .tools/dynamodb.endpoint &
//	TABLEBRIDGE_DYNAMODB_ENDPOINT=$(cat .tools/dynamodb.endpoint) go test ./...
//
// The endpoint file is written only once the instance answers, and removed on
// exit.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dynamolocal:", err)
		os.Exit(1)
	}
}

func run() error {
	endpointFile := flag.String("endpoint-file", "", "write the endpoint URL to this file once DynamoDB Local answers")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	inst, err := dynamolocal.Start(ctx)
	if err != nil {
		if errors.Is(err, dynamolocal.ErrNotInstalled) {
			return fmt.Errorf("%w (run `make tools`)", err)
		}
		return err
	}
	defer inst.Stop()

	if *endpointFile != "" {
		if err := os.WriteFile(*endpointFile, []byte(inst.Endpoint+"\n"), 0o644); err != nil {
			return err
		}
		defer os.Remove(*endpointFile)
	}
	fmt.Println(inst.Endpoint)

	select {
	case <-ctx.Done():
		return nil
	case <-inst.Done():
		return fmt.Errorf("DynamoDB Local exited unexpectedly; output:\n%s", inst.Output())
	}
}
