// Command readresource is the Lambda function serving GET /{account}/{resource}: Query Entities, Get Entity, Get Table and Get Table ACL.
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
		fmt.Fprintln(os.Stderr, "readresource:", err)
		os.Exit(1)
	}
}

func run() error { return lambdafn.Main("readresource") }
