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

func BenchmarkInsert(b *testing.B) {
	env := newEnv(b, newTestStore(b))
	phys, _ := env.s.physicalName(env.account, env.table)
	warmUp(b, env)
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
				Item:                                rawItem(i),
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

func BenchmarkGet(b *testing.B) {
	env := newEnv(b, newTestStore(b))
	phys, _ := env.s.physicalName(env.account, env.table)
	warmUp(b, env)
	e := newEntity("bench", "get", benchProps(1))
	env.insert(e)
	raw := rawItem(1)
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
				Key:            keyItem("bench", stringAttr(raw, attrRowKey)),
				ConsistentRead: aws.Bool(true),
			})
			if err != nil || out.Item == nil {
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
