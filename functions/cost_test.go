package functions_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/deploy"
)

// Public prices, us-east-1, as listed on the AWS pricing pages for Lambda,
// API Gateway and DynamoDB (on-demand, after the 1 November 2024
// reduction), taken 2026-11-25. docs/aws.md's cost table ("Profiles and
// cost") quotes them.
const (
	priceLambdaRequest  = 0.20 / 1e6   // per invocation
	priceLambdaGBSecond = 0.0000133334 // arm64, first 7.5 billion GB-s a month
	priceRESTAPIRequest = 3.50 / 1e6   // REST API, first 333 million a month
	priceHTTPAPIRequest = 1.00 / 1e6   // HTTP API, first 300 million a month (per 512 KB)
	priceWriteUnit      = 0.625 / 1e6  // on-demand write request unit
	priceReadUnit       = 0.125 / 1e6  // on-demand read request unit
	lambdaMemoryGB      = 512.0 / 1024 // template.yaml MemorySize
	costSamplesPerOp    = 15           // warm invocations measured per operation
	costQueryRows       = 1000         // rows per measured query
	costBatchSize       = 100          // entities per measured batch
)

// envMeasureCost turns the cost measurement on.
const envMeasureCost = "TABLEBRIDGE_MEASURE_COST"

// opCost is what one operation costs: billed milliseconds (median of the
// emulator's REPORT lines) and DynamoDB read and write capacity units
// (medians of the request log lines' readCapacity and writeCapacity).
type opCost struct {
	name        string
	billedMs    float64
	read, write float64
}

// perMillion prices a million of the operation behind a front door.
func (c opCost) perMillion(apiPrice float64) (total, lambda, dynamo float64) {
	lambda = 1e6 * (priceLambdaRequest + c.billedMs/1000*lambdaMemoryGB*priceLambdaGBSecond)
	dynamo = 1e6 * (c.read*priceReadUnit + c.write*priceWriteUnit)
	return 1e6*apiPrice + lambda + dynamo, lambda, dynamo
}

// units says the operation's DynamoDB units: "1 RRU + 2 WRU".
func (c opCost) units() string {
	var parts []string
	if c.read > 0 {
		parts = append(parts, fmt.Sprintf("%g RRU", c.read))
	}
	if c.write > 0 {
		parts = append(parts, fmt.Sprintf("%g WRU", c.write))
	}
	return strings.Join(parts, " + ")
}

// measureCost drives point reads, inserts, 100-entity batches and
// 1,000-row queries through the REST API profile (per-operation
// functions) and the Function URL profile (the catch-all function) and
// logs what a million of each costs at the public prices: the HTTP API
// profile runs the REST profile's functions, so its Lambda and DynamoDB
// figures are the REST ones with the HTTP API's request price.
//
// It runs only when envMeasureCost is 1 (make cost): some 120 invocations
// that assert nothing, only print docs/aws.md's cost table.
func measureCost(t *testing.T, d *deployment) {
	if os.Getenv(envMeasureCost) != "1" {
		t.Skipf("set %s=1 (make cost) to measure what each operation costs", envMeasureCost)
	}
	type profileRun struct {
		name  string
		opts  gatewayevent.Options
		fn    func(op string) string // function serving op
		price float64
	}
	perOp := map[string]string{"read": "readresource", "insert": "insertorbatch", "batch": "insertorbatch", "query": "readresource"}
	runs := []profileRun{
		{"REST API", gatewayevent.Options{Profile: deploy.ProfileRESTAPI, Stage: gatewayevent.SampleStage}, func(op string) string { return perOp[op] }, priceRESTAPIRequest},
		{"Function URL", gatewayevent.Options{Profile: deploy.ProfileFunctionURL}, func(string) string { return "tableservice" }, 0},
	}
	var rows []string
	for i, run := range runs {
		g := newGateway(t, run.opts, d.invoke)
		dev := auth.DevStoreAccount()
		svc := protocoltest.NewServiceClient(t, fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
			dev.Name, auth.DevStoreAccountKey, g.accountURL(dev.Name)))
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		table := fmt.Sprintf("cost%d", i)
		if _, err := svc.CreateTable(ctx, table, nil); err != nil {
			cancel()
			t.Fatal(err)
		}
		client := svc.NewClient(table)
		entity := func(pk string, n int) []byte {
			return mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": fmt.Sprintf("%06d", n), "Name": "customer " + fmt.Sprint(n),
				"Email": fmt.Sprintf("c%d@example.com", n), "Balance": float64(n) * 1.5, "Active": n%2 == 0})
		}
		measure := func(op string, do func(n int)) opCost {
			f := d.fns[run.fn(op)]
			reportsBefore, linesBefore := len(f.reports()), len(f.out.jsonLines())
			for n := range costSamplesPerOp {
				do(n)
			}
			var billed, read, write []float64
			for _, r := range f.reports()[reportsBefore:] {
				billed = append(billed, r.billed)
			}
			for _, line := range f.out.jsonLines()[linesBefore:] {
				r, rok := line["readCapacity"].(float64)
				w, wok := line["writeCapacity"].(float64)
				if rok && wok && line["msg"] == "request" {
					read, write = append(read, r), append(write, w)
				}
			}
			return opCost{name: op, billedMs: median(billed), read: median(read), write: median(write)}
		}
		costs := []opCost{
			measure("insert", func(n int) {
				if _, err := client.AddEntity(ctx, entity("single", n), nil); err != nil {
					t.Fatal(err)
				}
			}),
			measure("read", func(n int) {
				if _, err := client.GetEntity(ctx, "single", fmt.Sprintf("%06d", n), nil); err != nil {
					t.Fatal(err)
				}
			}),
			measure("batch", func(n int) {
				var actions []aztables.TransactionAction
				for k := range costBatchSize {
					actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
						Entity: entity("rows", n*costBatchSize+k)})
				}
				if _, err := client.SubmitTransaction(ctx, actions, nil); err != nil {
					t.Fatal(err)
				}
			}),
		}
		// DynamoDB Local reports a few units for a whole TransactWriteItems
		// (4 for 100 puts); DynamoDB bills each transactional write twice
		// ("Capacity unit consumption for transactions": 2 WRU per item up
		// to 1 KB), plus the index writes a single insert shows. The table
		// uses the documented figure when Local's is below it.
		if insert, batch := costs[0], &costs[2]; batch.write < costBatchSize*(insert.write+1) {
			t.Logf("%s: DynamoDB Local reported %.0f WRU for a %d-entity transaction; pricing the documented %.0f (2 per transactional item write, plus index writes)",
				run.name, batch.write, costBatchSize, costBatchSize*(insert.write+1))
			batch.write = costBatchSize * (insert.write + 1)
		}
		costs = append(costs, measure("query", func(n int) {
			pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'rows'"), Top: to.Ptr[int32](costQueryRows)})
			page, err := pager.NextPage(ctx)
			if err != nil || len(page.Entities) != costQueryRows {
				t.Fatalf("query: %v, %d rows", err, len(page.Entities))
			}
		}))
		cancel()
		for _, c := range costs {
			total, lambda, dynamo := c.perMillion(run.price)
			rows = append(rows, fmt.Sprintf("| %s | %s | %.0f ms | %s | $%.2f | $%.2f | $%.2f | $%.2f |", run.name, opName(c.name), c.billedMs, c.units(),
				1e6*run.price, lambda, dynamo, total))
			if run.name == "REST API" {
				total, _, _ := c.perMillion(priceHTTPAPIRequest)
				rows = append(rows, fmt.Sprintf("| HTTP API | %s | %.0f ms | %s | $%.2f | $%.2f | $%.2f | $%.2f |", opName(c.name), c.billedMs, c.units(),
					1e6*priceHTTPAPIRequest, lambda, dynamo, total))
			}
		}
	}
	slices.Sort(rows)
	t.Logf("cost per million operations (median billed duration of %d warm invocations under aws-lambda-rie, %g GB):\n"+
		"| profile | operation | billed | DynamoDB | API | Lambda | DynamoDB | total |\n|---|---|---|---|---|---|---|---|\n%s",
		costSamplesPerOp, lambdaMemoryGB, strings.Join(rows, "\n"))
}

func opName(op string) string {
	switch op {
	case "read":
		return "point read"
	case "insert":
		return "insert"
	case "batch":
		return fmt.Sprintf("%d-entity batch", costBatchSize)
	}
	return fmt.Sprintf("%d-row query", costQueryRows)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
