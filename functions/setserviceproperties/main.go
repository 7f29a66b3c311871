// Command setserviceproperties is the Lambda function serving Set Table Service Properties (PUT /{account}/?restype=service&comp=properties).
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
		fmt.Fprintln(os.Stderr, "setserviceproperties:", err)
		os.Exit(1)
	}
}

func run() error { return lambdafn.Main("setserviceproperties") }
