// Package spreadload is test tooling: a paced workload on one table spread
// over many PartitionKeys, driven through the Go SDK (aztables), the way
// Azure's guidance on scalable partitioning has applications spread their
// load ("Performance and scalability checklist for Table storage"): each
// partition gets an insert, then point reads and merges of it. The
// capacity tests run it behind internal/dynamoproxy at a multiple of one
// DynamoDB partition key's (scaled-down) capacity, and read from the proxy
// which keys carried it.
package spreadload

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/dynamoproxy"
)

// Config is one run.
type Config struct {
	// Table is the client of the table the run writes; the table exists.
	Table *aztables.Client
	// Partitions is how many PartitionKeys the run spreads over; the first
	// Partitions operations insert one entity into each.
	Partitions int
	// Ops is how many operations the run sends.
	Ops int
	// Rate is the operations a second offered: operation i is sent at
	// i/Rate seconds from the start, or later when all Concurrency
	// clients are busy.
	Rate float64
	// Concurrency is how many operations may be outstanding at once.
	// Default 16.
	Concurrency int
}

// Result is what a run did.
type Result struct {
	Ops     int // operations answered with success
	Failed  int
	Errors  []string // the first few failures, as the SDK reported them
	Elapsed time.Duration
}

// PerSecond is the rate of successful operations over the run.
func (r Result) PerSecond() float64 { return float64(r.Ops) / r.Elapsed.Seconds() }

func (r Result) String() string {
	return fmt.Sprintf("%d operations in %v (%.0f/s), %d failed", r.Ops, r.Elapsed.Round(time.Millisecond), r.PerSecond(), r.Failed)
}

// maxErrors bounds the failures a Result keeps verbatim.
const maxErrors = 5

// Run sends the workload and waits for every answer.
func Run(ctx context.Context, cfg Config) Result {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 16
	}
	start := time.Now()
	ops := make(chan int)
	var mu sync.Mutex
	var res Result
	var wg sync.WaitGroup
	for range cfg.Concurrency {
		wg.Go(func() {
			for i := range ops {
				err := operation(ctx, cfg, i)
				mu.Lock()
				if err == nil {
					res.Ops++
				} else {
					res.Failed++
					if len(res.Errors) < maxErrors {
						res.Errors = append(res.Errors, err.Error())
					}
				}
				mu.Unlock()
			}
		})
	}
	for i := range cfg.Ops {
		if cfg.Rate > 0 {
			due := start.Add(time.Duration(float64(i) / cfg.Rate * float64(time.Second)))
			if d := time.Until(due); d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
				}
			}
		}
		if ctx.Err() != nil {
			break
		}
		ops <- i
	}
	close(ops)
	wg.Wait()
	res.Elapsed = time.Since(start)
	return res
}

// operation sends operation i: the insert of partition i for the first
// Partitions, then a point read or a merge of partition i mod Partitions:
// each round over the partitions reads half of them and merges the other
// half, and the next round swaps the halves, so every partition gets the
// same share of each.
func operation(ctx context.Context, cfg Config, i int) error {
	pk := "p" + strconv.Itoa(i%cfg.Partitions)
	switch {
	case i < cfg.Partitions:
		_, err := cfg.Table.AddEntity(ctx, entity(pk, i), nil)
		return err
	case (i/cfg.Partitions+i)%2 == 0:
		_, err := cfg.Table.GetEntity(ctx, pk, "r", nil)
		return err
	default:
		_, err := cfg.Table.UpdateEntity(ctx, entity(pk, i), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge})
		return err
	}
}

func entity(pk string, i int) []byte {
	return []byte(`{"PartitionKey":"` + pk + `","RowKey":"r","N":` + strconv.Itoa(i) + `}`)
}

// KeyCapacity is one DynamoDB partition key's capacity in the capacity
// tests, in read units and in write units a second: scaled down from AWS's
// 3,000 and 1,000 so that this machine can offer a table ten times as
// much. Give it to dynamoproxy.Capacity.
const KeyCapacity = 10

// CheckTenKeys runs the workload on table at ten times KeyCapacity
// operations a second, 200 partitions and 400 operations, and checks
// what proxy saw meanwhile: no throttle, no failure, and no partition key
// that carried more than a tenth of the table's operations.
func CheckTenKeys(t testing.TB, proxy *dynamoproxy.Proxy, table *aztables.Client) {
	t.Helper()
	const ops = 400
	before := proxy.Stats()
	res := Run(context.Background(), Config{Table: table, Partitions: 200, Ops: ops, Rate: 10 * KeyCapacity})
	window := proxy.Stats().Since(before)
	key, usage, _ := window.Hottest()
	t.Logf("%v, offered at %d/s, ten times one key's %d units/s; %d DynamoDB requests; hottest key %v: %d requests (%.1f%% of the operations), %.1f RCU, %.1f WCU",
		res, 10*KeyCapacity, KeyCapacity, window.Requests, key, usage.Requests, 100*float64(usage.Requests)/ops, usage.ReadUnits, usage.WriteUnits)
	if res.Failed > 0 {
		t.Errorf("%d operations failed: %q", res.Failed, res.Errors)
	}
	var throttled []string
	for k, u := range window.Keys {
		if u.Throttles > 0 {
			throttled = append(throttled, fmt.Sprintf("%v: %d", k, u.Throttles))
		}
		if u.Requests*10 > ops {
			t.Errorf("key %v carried %d requests of %d operations, more than a tenth", k, u.Requests, ops)
		}
	}
	if len(throttled) > 0 {
		t.Errorf("keys throttled: %v", throttled)
	}
}
