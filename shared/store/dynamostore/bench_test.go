package dynamostore

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// The benchmarks compare the store with the raw SDK calls it makes, against
// DynamoDB Local: the ratio is the store's own overhead (encoding, keys,
// conditions, decoding).
//
//	go test -run '^$' -bench . ./shared/store/dynamostore

func benchProps(i int) props {
	return props{
		"Name":    edm.NewString("entity number " + strconv.Itoa(i)),
		"Count":   edm.NewInt32(int32(i)),
		"Price":   edm.NewDouble(float64(i) + 0.25),
		"Active":  edm.NewBoolean(i%2 == 0),
		"Created": edm.NewDateTime(testTime.Add(time.Duration(i) * time.Second)),
	}
}

// rawItem is the item a hand-written SDK program would put for the same data.
func rawItem(i int) item {
	return item{
		"PartitionKey": &types.AttributeValueMemberS{Value: "bench"},
		"RowKey":       &types.AttributeValueMemberS{Value: fmt.Sprintf("raw%09d", i)},
		"Timestamp":    &types.AttributeValueMemberS{Value: formatTime(nextTS())},
		"Name":         &types.AttributeValueMemberS{Value: "entity number " + strconv.Itoa(i)},
		"Count":        &types.AttributeValueMemberN{Value: strconv.Itoa(i)},
		"Price":        &types.AttributeValueMemberN{Value: strconv.FormatFloat(float64(i)+0.25, 'g', -1, 64)},
		"Active":       &types.AttributeValueMemberBOOL{Value: i%2 == 0},
		"Created":      &types.AttributeValueMemberS{Value: formatTime(testTime.Add(time.Duration(i) * time.Second))},
	}
}

// benchSeq keeps inserted keys unique across runs (-count) of a benchmark.
var benchSeq atomic.Int64

// warmUp runs requests until DynamoDB Local's JVM has compiled its hot
// paths; otherwise whichever benchmark runs first pays for the JIT.
func warmUp(b *testing.B, env *testEnv) {
	b.Helper()
	for range 2000 {
		e := newEntity("warm", fmt.Sprintf("w%09d", benchSeq.Add(1)), benchProps(1))
		if err := env.write(store.Op{Kind: store.OpInsert, Entity: e}); err != nil {
			b.Fatal(err)
		}
		if _, err := env.s.GetEntity(env.ctx, env.account, env.table, e.PartitionKey, e.RowKey); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLayouts runs a store-against-raw benchmark on both layouts. The raw
// calls write and read the same items as the store, keys (with the shared
// layout's prefix) included.
func benchLayouts(b *testing.B, run func(b *testing.B, env *testEnv, loc location)) {
	for _, layout := range layouts {
		b.Run(layout.name, func(b *testing.B) {
			s := newTestStore(b)
			env := layout.newEnv(b, s)
			loc, err := s.locate(env.ctx, env.account, env.table)
			if err != nil {
				b.Fatal(err)
			}
			warmUp(b, env)
			run(b, env, loc)
		})
	}
}

// rawItemAt is rawItem stored at loc: its PartitionKey with the shared
// layout's prefix, and the order index's key, so the raw calls maintain the
// same index as the store and both sides of a comparison do the same
// DynamoDB work.
func rawItemAt(loc location, i int) item {
	return rawItemKeyed(loc, rawItem(i))
}

func rawItemKeyed(loc location, it item) item {
	pk := loc.pk(stringAttr(it, attrPartitionKey))
	it[attrPartitionKey] = str(pk)
	it[attrShard], it[attrOrder] = orderAttrs(&loc, pk, stringAttr(it, attrRowKey))
	return it
}

func BenchmarkInsert(b *testing.B) { benchLayouts(b, benchInsert) }

func benchInsert(b *testing.B, env *testEnv, loc location) {
	phys := loc.table
	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			i := int(benchSeq.Add(1))
			e := newEntity("bench", fmt.Sprintf("store%09d", i), benchProps(i))
			if err := env.s.Write(env.ctx, env.account, env.table, []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			i := int(benchSeq.Add(1))
			_, err := env.s.db.PutItem(env.ctx, &dynamodb.PutItemInput{
				TableName:                           aws.String(phys),
				Item:                                rawItemAt(loc, i),
				ConditionExpression:                 aws.String("attribute_not_exists(#pk)"),
				ExpressionAttributeNames:            map[string]string{"#pk": "PartitionKey"},
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGet(b *testing.B) { benchLayouts(b, benchGet) }

func benchGet(b *testing.B, env *testEnv, loc location) {
	phys := loc.table
	e := newEntity("bench", "get", benchProps(1))
	env.insert(e)
	raw := rawItemAt(loc, 1)
	if _, err := env.s.db.PutItem(env.ctx, &dynamodb.PutItemInput{TableName: aws.String(phys), Item: raw}); err != nil {
		b.Fatal(err)
	}
	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			if _, err := env.s.GetEntity(env.ctx, env.account, env.table, "bench", "get"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			out, err := env.s.db.GetItem(env.ctx, &dynamodb.GetItemInput{
				TableName:      aws.String(phys),
				Key:            keyItem(loc.pk("bench"), stringAttr(raw, attrRowKey)),
				ConsistentRead: aws.Bool(true),
			})
			if err != nil || out.Item == nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkQuery reads one partition of queryRows entities, strongly
// consistent, a page of up to 1000 per request.
func BenchmarkQuery(b *testing.B) { benchLayouts(b, benchQuery) }

const queryRows = 500

func benchQuery(b *testing.B, env *testEnv, loc location) {
	var ops []store.Op
	for i := range queryRows {
		ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity("query", fmt.Sprintf("r%05d", i), benchProps(i))})
		if len(ops) == 100 {
			if err := env.s.Write(env.ctx, env.account, env.table, ops); err != nil {
				b.Fatal(err)
			}
			ops = nil
		}
	}
	eq := &model.Bound{Value: "query", Inclusive: true}
	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			page, err := env.s.QueryEntities(env.ctx, env.account, env.table, store.Query{
				Keys: model.KeyRange{PartitionKey: model.Bounds{Lower: eq, Upper: eq}}, Top: 1000,
			})
			if err != nil || len(page.Entities) != queryRows {
				b.Fatal(len(page.Entities), err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			out, err := env.s.db.Query(env.ctx, &dynamodb.QueryInput{
				TableName:                 aws.String(loc.table),
				KeyConditionExpression:    aws.String("#pk = :pk"),
				ExpressionAttributeNames:  map[string]string{"#pk": attrPartitionKey},
				ExpressionAttributeValues: item{":pk": str(loc.pk("query"))},
				ConsistentRead:            aws.Bool(true),
				Limit:                     aws.Int32(1000),
			})
			if err != nil || len(out.Items) != queryRows {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBatch inserts 100 new entities in one transaction.
func BenchmarkBatch(b *testing.B) { benchLayouts(b, benchBatch) }

func benchBatch(b *testing.B, env *testEnv, loc location) {
	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			ops := make([]store.Op, 100)
			for j := range ops {
				i := int(benchSeq.Add(1))
				ops[j] = store.Op{Kind: store.OpInsert, Entity: newEntity("batch", fmt.Sprintf("store%09d", i), benchProps(i))}
			}
			if err := env.s.Write(env.ctx, env.account, env.table, ops); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			items := make([]types.TransactWriteItem, 100)
			for j := range items {
				it := rawItem(int(benchSeq.Add(1)))
				it[attrPartitionKey] = str("batch")
				items[j] = types.TransactWriteItem{Put: &types.Put{
					TableName:                           aws.String(loc.table),
					Item:                                rawItemKeyed(loc, it),
					ConditionExpression:                 aws.String("attribute_not_exists(#pk)"),
					ExpressionAttributeNames:            map[string]string{"#pk": attrPartitionKey},
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
				}}
			}
			if _, err := env.s.db.TransactWriteItems(env.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The codec alone, without DynamoDB: the CPU the store adds per entity.
func BenchmarkCodec(b *testing.B) {
	e := newEntity("bench", "codec", benchProps(7))
	b.Run("buildItems", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := buildItems(testLoc, e); err != nil {
				b.Fatal(err)
			}
		}
	})
	ei, err := buildItems(testLoc, e)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("decodeItems", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeItems(testLoc, ei.main, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
