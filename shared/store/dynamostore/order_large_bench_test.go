//go:build largebench

package dynamostore

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// BenchmarkOrderedRange loads 100,000 entities in 1,000 partitions once
// (BatchWriteItem, which takes minutes on DynamoDB Local) and compares a
// 1% PartitionKey range read through the order index with the same query
// answered by a Scan, as placements without the index answer it, on a
// placement that has the index. Build tag
// largebench keeps it out of every other run:
//
//	go test -tags largebench -run '^$' -bench OrderedRange -benchtime 5x -timeout 30m ./shared/store/dynamostore
func BenchmarkOrderedRange(b *testing.B) {
	env := largeTable(b)
	phys := dynamolocal.PerTableName(env.s.opts.TablePrefix, env.account, env.table)
	pkRange := func(lo, hi string) store.Query {
		keys := model.KeyRange{PartitionKey: model.Bounds{Lower: &model.Bound{Value: lo, Inclusive: true}, Upper: &model.Bound{Value: hi}}}
		return store.Query{Keys: keys, Match: func(e *model.Entity) bool { return keys.Contains(e.PartitionKey, e.RowKey) }}
	}
	onePercent := pkRange("p0500", "p0510") // 10 partitions of 100 entities
	all := store.Query{}
	gtTop := store.Query{Keys: model.KeyRange{PartitionKey: model.Bounds{Lower: &model.Bound{Value: "p0900"}}}}
	for _, c := range []struct {
		name  string
		q     store.Query
		top   int
		pages int // 0: all
		scan  bool
	}{
		{"range1pct/index/top1000", onePercent, 1000, 0, false},
		{"range1pct/index/top100", onePercent, 100, 0, false},
		{"range1pct/scan/top1000", onePercent, 1000, 0, true},
		{"gt-top10/index", gtTop, 10, 1, false},
		{"gt-top10/scan", gtTop, 10, 1, true},
		{"all/index/top1000", all, 1000, 0, false},
		{"all/scan/top1000", all, 1000, 0, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			var returned, read, calls int
			n := 0
			for b.Loop() {
				n++
				if c.scan {
					env.s.markNoIndex(phys)
				} else {
					env.s.noIndex.Delete(phys)
				}
				q := c.q
				q.Top = c.top
				for p := 0; c.pages == 0 || p < c.pages; p++ {
					page, err := env.s.QueryEntities(env.ctx, env.account, env.table, q)
					if err != nil {
						b.Fatal(err)
					}
					calls++
					returned += len(page.Entities)
					read += page.ItemsRead
					if page.Next == nil {
						break
					}
					q.After = page.Next
				}
			}
			b.ReportMetric(float64(returned)/float64(n), "entities/op")
			b.ReportMetric(float64(read)/float64(n), "itemsRead/op")
			b.ReportMetric(float64(read)/float64(max(returned, 1)), "read/returned")
			b.ReportMetric(float64(calls)/float64(n), "pages/op")
		})
	}
	env.s.noIndex.Delete(phys)
}

var (
	largeOnce sync.Once
	largeEnv  *testEnv
)

// largeTable creates and fills the table once per process.
func largeTable(b *testing.B) *testEnv {
	largeOnce.Do(func() {
		s := newTestStore(b)
		env := &testEnv{t: b, s: s, ctx: context.Background(), account: "acct", table: "Large"}
		phys := createPlacement(b, s, env.account, env.table, true)
		client := dynamolocal.Client(b)
		start := time.Now()
		const partitions, rows, workers = 1000, 100, 4
		work := make(chan int)
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for first := range work {
					if err := loadBatch(env.ctx, client, phys, first, rows); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		for i := 0; i < partitions*rows; i += 25 {
			select {
			case err := <-errs:
				b.Fatal(err)
			case work <- i:
			}
		}
		close(work)
		wg.Wait()
		select {
		case err := <-errs:
			b.Fatal(err)
		default:
		}
		b.Logf("loaded %d entities in %d partitions in %v", partitions*rows, partitions, time.Since(start).Round(time.Second))
		largeEnv = env
	})
	if largeEnv == nil {
		b.Fatal("the large table failed to load")
	}
	return largeEnv
}

// loadBatch writes entities first..first+24 (entity i is row i%rows of
// partition i/rows) with BatchWriteItem, retrying unprocessed items.
func loadBatch(ctx context.Context, client *dynamodb.Client, phys string, first, rows int) error {
	var reqs []types.WriteRequest
	for i := first; i < first+25; i++ {
		ei, err := buildItems(testLoc, newEntity(fmt.Sprintf("p%04d", i/rows), fmt.Sprintf("r%03d", i%rows), benchProps(i)))
		if err != nil {
			return err
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: ei.main}})
	}
	pending := map[string][]types.WriteRequest{phys: reqs}
	for attempt := 0; len(pending) > 0; attempt++ {
		if attempt > 20 {
			return fmt.Errorf("BatchWriteItem: items still unprocessed after %d attempts", attempt)
		}
		out, err := client.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return err
		}
		pending = out.UnprocessedItems
		if len(pending) > 0 {
			time.Sleep(time.Duration(attempt+1) * 50 * time.Millisecond)
		}
	}
	return nil
}
