// Command mergeentity is the Lambda function serving PATCH (and MERGE) /{account}/{resource}: Merge Entity and Insert Or Merge Entity.
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
		fmt.Fprintln(os.Stderr, "mergeentity:", err)
		os.Exit(1)
	}
}

func run() error { return lambdafn.Main("mergeentity") }
