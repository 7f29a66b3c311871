// Command tableservice is the Lambda function serving every operation (the Function URL profile, the HTTP API $default route).
// It is wiring only; shared/lambdafn does the work and template.yaml
// routes API Gateway to it.
package main

import (
	"fmt"
	"os"

	"github.com/tablebridge/tablebridge/shared/lambdafn"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "tableservice:", err)
		os.Exit(1)
	}
}

func run() error { return lambdafn.Main("tableservice") }
