// Command updateentity is the Lambda function serving PUT /{account}/{resource}: Update Entity, Insert Or Replace Entity and Set Table ACL.
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
		fmt.Fprintln(os.Stderr, "updateentity:", err)
		os.Exit(1)
	}
}

func run() error { return lambdafn.Main("updateentity") }
