package dynamostore

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

// capacityMeter asks DynamoDB for the consumed capacity of every write
// (ReturnConsumedCapacity=INDEXES: the table's and each index's) and sums
// it, with the number of calls.
type capacityMeter struct {
	mu           sync.Mutex
	calls        int
	table, index float64
}

func (m *capacityMeter) option(o *dynamodb.Options) {
	initHook("meterCapacity", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		const indexes = types.ReturnConsumedCapacityIndexes
		switch p := in.Parameters.(type) {
		case *dynamodb.PutItemInput:
			p.ReturnConsumedCapacity = indexes
		case *dynamodb.UpdateItemInput:
			p.ReturnConsumedCapacity = indexes
		case *dynamodb.DeleteItemInput:
			p.ReturnConsumedCapacity = indexes
		case *dynamodb.TransactWriteItemsInput:
			p.ReturnConsumedCapacity = indexes
		case *dynamodb.BatchWriteItemInput:
			p.ReturnConsumedCapacity = indexes
		}
		out, md, err := next.HandleInitialize(ctx, in)
		var used []types.ConsumedCapacity
		switch r := out.Result.(type) {
		case *dynamodb.PutItemOutput:
			used = oneCapacity(r.ConsumedCapacity)
		case *dynamodb.UpdateItemOutput:
			used = oneCapacity(r.ConsumedCapacity)
		case *dynamodb.DeleteItemOutput:
			used = oneCapacity(r.ConsumedCapacity)
		case *dynamodb.TransactWriteItemsOutput:
			used = r.ConsumedCapacity
		case *dynamodb.BatchWriteItemOutput:
			used = r.ConsumedCapacity
		}
		m.mu.Lock()
		m.calls++
		for _, c := range used {
			if c.Table != nil && c.Table.CapacityUnits != nil {
				m.table += *c.Table.CapacityUnits
			}
			for _, ix := range c.GlobalSecondaryIndexes {
				if ix.CapacityUnits != nil {
					m.index += *ix.CapacityUnits
				}
			}
		}
		m.mu.Unlock()
		return out, md, err
	})(o)
}

func oneCapacity(c *types.ConsumedCapacity) []types.ConsumedCapacity {
	if c == nil {
		return nil
	}
	return []types.ConsumedCapacity{*c}
}

func (m *capacityMeter) take() (calls int, table, index float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	calls, table, index = m.calls, m.table, m.index
	m.calls, m.table, m.index = 0, 0, 0
	return
}

// BenchmarkWriteCost measures what a write costs with the order index (the
// shared table) and without it (a placement an earlier release created
// without the index): DynamoDB calls and write capacity units (of the
// table, and of the order index) per entity written, from
// ReturnConsumedCapacity.
//
//	go test -run '^$' -bench WriteCost ./shared/store/dynamostore
func BenchmarkWriteCost(b *testing.B) {
	for _, layout := range []string{"unordered", "ordered"} {
		meter := &capacityMeter{}
		s := newTestStore(b, meter.option)
		env := &testEnv{t: b, s: s, ctx: dynamolocal.Context(b, testTimeout), account: "acct", table: "Table1"}
		if layout == "ordered" {
			env = newEnv(b, s)
		} else {
			createPlacement(b, s, env.account, env.table, false)
		}
		run := func(name string, perOp int, ops func(i int) []store.Op) {
			b.Run(layout+"/"+name, func(b *testing.B) {
				meter.take()
				n := 0
				for b.Loop() {
					n++
					if err := env.s.Write(env.ctx, env.account, env.table, ops(int(benchSeq.Add(1)))); err != nil {
						b.Fatal(err)
					}
				}
				calls, table, index := meter.take()
				entities := float64(n * perOp)
				b.ReportMetric(float64(calls)/float64(n), "calls/op")
				b.ReportMetric(table/entities, "tableWCU/entity")
				b.ReportMetric(index/entities, "indexWCU/entity")
			})
		}
		insert := func(i int) store.Op {
			return store.Op{Kind: store.OpInsert, Entity: newEntity(fmt.Sprintf("p%d", i%100), fmt.Sprintf("w%09d", i), benchProps(i))}
		}
		run("insert", 1, func(i int) []store.Op { return []store.Op{insert(i)} })
		run("merge", 1, func(i int) []store.Op {
			return []store.Op{{Kind: store.OpMerge, Entity: newEntity("merged", fmt.Sprintf("m%d", i%10), props{"V": edm.NewInt32(int32(i))})}}
		})
		run("batch100", 100, func(i int) []store.Op {
			ops := make([]store.Op, 100)
			for j := range ops {
				ops[j] = store.Op{Kind: store.OpInsert, Entity: newEntity(fmt.Sprintf("b%d", i), fmt.Sprintf("w%03d", j), benchProps(j))}
			}
			return ops
		})
	}
}
