// Command purgetables is the Lambda function that deletes what Delete Table
// left behind (a deleted table's items, or its DynamoDB table of an earlier
// release): an EventBridge schedule invokes it (see
// template.yaml, PurgeTablesFunction). It is wiring only; shared/lambdafn
// and shared/store/dynamostore do the work.
package main

import (
	"fmt"
	"os"

	"github.com/tablebridge/tablebridge/shared/lambdafn"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "purgetables:", err)
		os.Exit(1)
	}
}

func run() error { return lambdafn.MainPurge() }
