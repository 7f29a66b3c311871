// Command insertorbatch is the Lambda function serving POST /{account}/{resource}: Insert Entity, entity group transactions ($batch) and X-HTTP-Method tunnelling.
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
		fmt.Fprintln(os.Stderr, "insertorbatch:", err)
		os.Exit(1)
	}
}

func run() error { return lambdafn.Main("insertorbatch") }
