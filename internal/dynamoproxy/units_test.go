package dynamoproxy

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// units is a key's expected read and write units.
type units struct{ read, write float64 }

// wantUnits checks that exactly the keys given were charged, with the units
// given, and that each was touched by one request.
func wantUnits(t *testing.T, s Stats, want map[Key]units) {
	t.Helper()
	for k, w := range want {
		u, ok := s.Keys[k]
		if !ok {
			t.Errorf("%v: not touched; want %+v (touched: %v)", k, w, slices.Collect(maps.Keys(s.Keys)))
			continue
		}
		if math.Abs(u.ReadUnits-w.read) > 1e-9 || math.Abs(u.WriteUnits-w.write) > 1e-9 {
			t.Errorf("%v: %v read, %v write units; want %v, %v", k, u.ReadUnits, u.WriteUnits, w.read, w.write)
		}
		if u.Requests != 1 {
			t.Errorf("%v: %d requests; want 1", k, u.Requests)
		}
	}
	for k := range s.Keys {
		if _, ok := want[k]; !ok {
			t.Errorf("%v touched (%+v); want untouched", k, s.Keys[k])
		}
	}
}

// Item sizes below: pk and rk of one character each cost 2+2 bytes, the
// payload attribute d 1 byte plus its length, g 1 byte plus its value. So
// item(pk, rk, n) is n+5 bytes: 1,000 bytes of payload make one write unit,
// 3,000 three, and three 1,000-byte items fit one 4 KB read unit together
// but not apart.

// TestReadUnits: GetItem rounds each item up to 4 KB, halves for an
// eventually consistent read; Query rounds the total; BatchGetItem rounds
// per item; TransactGetItems doubles.
func TestReadUnits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	tbl := e.table(t, tableSpec{})
	e.put(t, tbl, item("b", "1", 3000))
	e.put(t, tbl, item("c", "1", 6000))
	for _, rk := range []string{"1", "2", "3"} {
		e.put(t, tbl, item("q", rk, 1000))
	}
	k := func(pk string) Key { return Key{Table: tbl, Hash: pk} }
	get := func(pk string, consistent bool) func() {
		return func() {
			if _, err := e.client.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key(pk, "1"), ConsistentRead: aws.Bool(consistent)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	query := func(consistent bool) func() {
		return func() {
			out, err := e.client.Query(e.ctx, &dynamodb.QueryInput{TableName: aws.String(tbl), ConsistentRead: aws.Bool(consistent),
				KeyConditionExpression:    aws.String("#p = :p"),
				ExpressionAttributeNames:  map[string]string{"#p": "pk"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "q"}}})
			if err != nil || out.Count != 3 {
				t.Fatalf("Query: %v, %d items", err, out.Count)
			}
		}
	}
	t.Run("GetItem strong", func(t *testing.T) { wantUnits(t, e.usage(t, get("b", true)), map[Key]units{k("b"): {read: 1}}) })
	t.Run("GetItem eventual", func(t *testing.T) { wantUnits(t, e.usage(t, get("b", false)), map[Key]units{k("b"): {read: 0.5}}) })
	t.Run("GetItem 6 KB strong", func(t *testing.T) { wantUnits(t, e.usage(t, get("c", true)), map[Key]units{k("c"): {read: 2}}) })
	t.Run("GetItem 6 KB eventual", func(t *testing.T) { wantUnits(t, e.usage(t, get("c", false)), map[Key]units{k("c"): {read: 1}}) })
	t.Run("Query strong", func(t *testing.T) { wantUnits(t, e.usage(t, query(true)), map[Key]units{k("q"): {read: 1}}) })
	t.Run("Query eventual", func(t *testing.T) { wantUnits(t, e.usage(t, query(false)), map[Key]units{k("q"): {read: 0.5}}) })
	t.Run("BatchGetItem", func(t *testing.T) {
		s := e.usage(t, func() {
			_, err := e.client.BatchGetItem(e.ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				tbl: {Keys: []map[string]types.AttributeValue{key("q", "1"), key("q", "2"), key("c", "1")}, ConsistentRead: aws.Bool(true)}}})
			if err != nil {
				t.Fatal(err)
			}
		})
		wantUnits(t, s, map[Key]units{k("q"): {read: 2}, k("c"): {read: 2}})
	})
	t.Run("TransactGetItems", func(t *testing.T) {
		s := e.usage(t, func() {
			_, err := e.client.TransactGetItems(e.ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
				{Get: &types.Get{TableName: aws.String(tbl), Key: key("q", "1")}},
				{Get: &types.Get{TableName: aws.String(tbl), Key: key("b", "1")}}}})
			if err != nil {
				t.Fatal(err)
			}
		})
		wantUnits(t, s, map[Key]units{k("q"): {read: 2}, k("b"): {read: 2}})
	})
}

// TestWriteUnits: 1 KB a unit on the larger of the old and new item,
// doubled in a transaction, the failed condition's stored item charged.
func TestWriteUnits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	tbl := e.table(t, tableSpec{})
	k := func(pk string) Key { return Key{Table: tbl, Hash: pk} }
	put := func(it map[string]types.AttributeValue) func() {
		return func() {
			if _, err := e.client.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: it}); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Run("PutItem small", func(t *testing.T) {
		wantUnits(t, e.usage(t, put(item("a", "1", 100))), map[Key]units{k("a"): {write: 1}})
	})
	t.Run("PutItem large", func(t *testing.T) {
		wantUnits(t, e.usage(t, put(item("b", "1", 3000))), map[Key]units{k("b"): {write: 3}})
	})
	t.Run("PutItem shrinking", func(t *testing.T) {
		wantUnits(t, e.usage(t, put(item("b", "1", 10))), map[Key]units{k("b"): {write: 3}})
	})
	t.Run("UpdateItem growing", func(t *testing.T) {
		e.put(t, tbl, item("u", "1", 1000))
		s := e.usage(t, func() {
			_, err := e.client.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key("u", "1"),
				UpdateExpression:          aws.String("SET d = :d"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberS{Value: strings.Repeat("y", 5000)}}})
			if err != nil {
				t.Fatal(err)
			}
		})
		wantUnits(t, s, map[Key]units{k("u"): {write: 5}})
	})
	t.Run("DeleteItem", func(t *testing.T) {
		e.put(t, tbl, item("d", "1", 3000))
		s := e.usage(t, func() {
			if _, err := e.client.DeleteItem(e.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: key("d", "1")}); err != nil {
				t.Fatal(err)
			}
		})
		wantUnits(t, s, map[Key]units{k("d"): {write: 3}})
	})
	t.Run("TransactWriteItems", func(t *testing.T) {
		e.put(t, tbl, item("t2", "1", 1000))
		s := e.usage(t, func() {
			_, err := e.client.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Put: &types.Put{TableName: aws.String(tbl), Item: item("t1", "1", 2000)}},
				{Update: &types.Update{TableName: aws.String(tbl), Key: key("t2", "1"), UpdateExpression: aws.String("SET e = :e"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":e": &types.AttributeValueMemberS{Value: "y"}}}}}})
			if err != nil {
				t.Fatal(err)
			}
		})
		wantUnits(t, s, map[Key]units{k("t1"): {write: 4}, k("t2"): {write: 2}})
	})
	t.Run("BatchWriteItem", func(t *testing.T) {
		e.put(t, tbl, item("w2", "1", 3000))
		s := e.usage(t, func() {
			out, err := e.client.BatchWriteItem(e.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
				{PutRequest: &types.PutRequest{Item: item("w1", "1", 2000)}},
				{DeleteRequest: &types.DeleteRequest{Key: key("w2", "1")}}}}})
			if err != nil || len(out.UnprocessedItems) != 0 {
				t.Fatalf("BatchWriteItem: %v, unprocessed %v", err, out.UnprocessedItems)
			}
		})
		wantUnits(t, s, map[Key]units{k("w1"): {write: 2}, k("w2"): {write: 3}})
	})
	t.Run("failed condition", func(t *testing.T) {
		e.put(t, tbl, item("f", "1", 3000))
		for _, asked := range []types.ReturnValuesOnConditionCheckFailure{"", types.ReturnValuesOnConditionCheckFailureAllOld} {
			s := e.usage(t, func() {
				_, err := e.client.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: item("f", "1", 10),
					ConditionExpression: aws.String("attribute_not_exists(pk)"), ReturnValuesOnConditionCheckFailure: asked})
				var ccf *types.ConditionalCheckFailedException
				if !errors.As(err, &ccf) {
					t.Fatalf("PutItem = %v; want ConditionalCheckFailedException", err)
				}
				if got := ccf.Item != nil; got != (asked != "") {
					t.Errorf("asked %q: stored item returned = %t", asked, got)
				}
			})
			wantUnits(t, s, map[Key]units{k("f"): {write: 3}})
		}
	})
}

// TestIndexWriteUnits: a write to an item in a global secondary index is
// also a write on the index's partition key: the old item's and the new
// one's, learnt from the answer, from a read before the write (batches and
// transactions) or after it (an update that moves the index key).
func TestIndexWriteUnits(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	tbl := e.table(t, tableSpec{index: true})
	k := func(pk string) Key { return Key{Table: tbl, Hash: pk} }
	g := func(v string) Key { return Key{Table: tbl, Index: "byG", Hash: v} }
	setD := &types.Update{UpdateExpression: aws.String("SET d = :d"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": &types.AttributeValueMemberS{Value: strings.Repeat("z", 2990)}}}
	run := func(t *testing.T, fn func() error) Stats {
		t.Helper()
		return e.usage(t, func() {
			if err := fn(); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Run("PutItem new", func(t *testing.T) {
		s := run(t, func() error {
			_, err := e.client.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: item("i", "1", 2990, "g", "G1")})
			return err
		})
		wantUnits(t, s, map[Key]units{k("i"): {write: 3}, g("G1"): {write: 3}})
	})
	t.Run("PutItem moving the index key", func(t *testing.T) {
		s := run(t, func() error {
			out, err := e.client.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: item("i", "1", 2990, "g", "G2")})
			if err == nil && out.Attributes != nil {
				t.Error("the answer carries the old item the client did not ask for")
			}
			return err
		})
		wantUnits(t, s, map[Key]units{k("i"): {write: 3}, g("G1"): {write: 3}, g("G2"): {write: 3}})
	})
	t.Run("UpdateItem keeping the index key", func(t *testing.T) {
		s := run(t, func() error {
			_, err := e.client.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key("i", "1"),
				UpdateExpression: setD.UpdateExpression, ExpressionAttributeValues: setD.ExpressionAttributeValues})
			return err
		})
		wantUnits(t, s, map[Key]units{k("i"): {write: 3}, g("G2"): {write: 3}})
	})
	t.Run("UpdateItem moving the index key", func(t *testing.T) {
		s := run(t, func() error {
			out, err := e.client.UpdateItem(e.ctx, &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key("i", "1"),
				UpdateExpression: aws.String("SET #g = :g"), ExpressionAttributeNames: map[string]string{"#g": "g"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: "G3"}},
				ReturnValues:              types.ReturnValueUpdatedOld})
			if err == nil && len(out.Attributes) != 1 {
				t.Errorf("UPDATED_OLD answered %v; want the old g only", out.Attributes)
			}
			return err
		})
		wantUnits(t, s, map[Key]units{k("i"): {write: 3}, g("G2"): {write: 3}, g("G3"): {write: 3}})
	})
	t.Run("DeleteItem", func(t *testing.T) {
		s := run(t, func() error {
			_, err := e.client.DeleteItem(e.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: key("i", "1")})
			return err
		})
		wantUnits(t, s, map[Key]units{k("i"): {write: 3}, g("G3"): {write: 3}})
	})
	t.Run("BatchWriteItem", func(t *testing.T) {
		e.put(t, tbl, item("b1", "1", 2990, "g", "G4"))
		s := run(t, func() error {
			_, err := e.client.BatchWriteItem(e.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
				{DeleteRequest: &types.DeleteRequest{Key: key("b1", "1")}},
				{PutRequest: &types.PutRequest{Item: item("b2", "1", 990, "g", "G4")}}}}})
			return err
		})
		wantUnits(t, s, map[Key]units{k("b1"): {write: 3}, k("b2"): {write: 1}, g("G4"): {write: 4}})
	})
	t.Run("TransactWriteItems", func(t *testing.T) {
		e.put(t, tbl, item("t1", "1", 990, "g", "G5"))
		s := run(t, func() error {
			up := *setD
			up.TableName, up.Key = aws.String(tbl), key("t1", "1")
			_, err := e.client.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
				{Update: &up},
				{Put: &types.Put{TableName: aws.String(tbl), Item: item("t2", "1", 990, "g", "G6")}}}})
			return err
		})
		wantUnits(t, s, map[Key]units{k("t1"): {write: 6}, g("G5"): {write: 6}, k("t2"): {write: 2}, g("G6"): {write: 2}})
	})
}

// TestConsumedCapacityAsAsked: the proxy asks DynamoDB Local for
// ConsumedCapacity with indexes on every request; the client gets what it
// asked for.
func TestConsumedCapacityAsAsked(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	tbl := e.table(t, tableSpec{index: true})
	for _, c := range []struct {
		ask     types.ReturnConsumedCapacity
		total   bool
		indexes bool
	}{{"", false, false}, {types.ReturnConsumedCapacityNone, false, false}, {types.ReturnConsumedCapacityTotal, true, false}, {types.ReturnConsumedCapacityIndexes, true, true}} {
		// A new index key each time: rewriting an item unchanged writes no
		// index entry.
		out, err := e.client.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: item("c", "1", 2990, "g", "G"+string(c.ask)), ReturnConsumedCapacity: c.ask})
		if err != nil {
			t.Fatal(err)
		}
		cc := out.ConsumedCapacity
		if got := cc != nil && aws.ToFloat64(cc.CapacityUnits) > 0; got != c.total {
			t.Errorf("asked %q: total units reported = %t (%+v)", c.ask, got, cc)
		}
		if got := cc != nil && cc.Table != nil && len(cc.GlobalSecondaryIndexes) == 1; got != c.indexes {
			t.Errorf("asked %q: per-index units reported = %t (%+v)", c.ask, got, cc)
		}
	}
}
