// Command deleteresource is the Lambda function serving DELETE /{account}/{resource}: Delete Entity and Delete Table.
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
		fmt.Fprintln(os.Stderr, "deleteresource:", err)
		os.Exit(1)
	}
}

func run() error { return lambdafn.Main("deleteresource") }
