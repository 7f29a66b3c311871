package dynamoproxy

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// arns returns the table's ARN and its index's, as DynamoDB Local reports
// them.
func (e *env) arns(t *testing.T, table string) (tableARN, indexARN string) {
	t.Helper()
	out, err := e.direct.DescribeTable(e.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range out.Table.GlobalSecondaryIndexes {
		indexARN = aws.ToString(g.IndexArn)
	}
	return aws.ToString(out.Table.TableArn), indexARN
}

func (e *env) putErr(table string, it map[string]types.AttributeValue) error {
	_, err := e.client.PutItem(e.ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: it})
	return err
}

// wantReason checks a throttling exception's reason and resource.
func wantReason(t *testing.T, got []types.ThrottlingReason, reason, resource string) {
	t.Helper()
	if len(got) != 1 || aws.ToString(got[0].Reason) != reason || aws.ToString(got[0].Resource) != resource {
		t.Errorf("ThrottlingReasons = %+v; want %s on %s", got, reason, resource)
	}
}

// TestThrottleSingle: a request that finds its key's bucket empty gets
// DynamoDB's answer (ThrottlingException on an on-demand table,
// ProvisionedThroughputExceededException on a provisioned one), is not
// applied, and goes through once the bucket has refilled on the model's
// clock. Other keys are not affected.
func TestThrottleSingle(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	e := newEnv(t, Config{Capacity: Capacity{ReadUnits: 2, WriteUnits: 2}, Clock: clock})
	onDemand, provisioned := e.table(t, tableSpec{}), e.table(t, tableSpec{provisioned: true})
	onDemandARN, _ := e.arns(t, onDemand)
	provisionedARN, _ := e.arns(t, provisioned)

	for _, rk := range []string{"1", "2"} {
		if err := e.putErr(onDemand, item("a", rk, 10)); err != nil {
			t.Fatal(err)
		}
	}
	err := e.putErr(onDemand, item("a", "3", 10))
	var te *types.ThrottlingException
	if !errors.As(err, &te) {
		t.Fatalf("third write in a second at 2 units/s = %v; want ThrottlingException", err)
	}
	wantReason(t, te.ThrottlingReasons, "TableWriteKeyRangeThroughputExceeded", onDemandARN)
	if aws.ToString(te.Message) != onDemandTableMessage {
		t.Errorf("message %q", aws.ToString(te.Message))
	}
	if e.stored(t, onDemand, "a", "3") {
		t.Error("the throttled write was applied")
	}
	if err := e.putErr(onDemand, item("b", "1", 10)); err != nil {
		t.Fatalf("another key: %v", err)
	}
	if u := e.proxy.Stats().Keys[Key{Table: onDemand, Hash: "a"}]; u.Throttles != 1 || u.Requests != 2 {
		t.Errorf("usage of the throttled key = %+v; want 2 requests, 1 throttle", u)
	}

	clock.Advance(500 * time.Millisecond)
	if err := e.putErr(onDemand, item("a", "3", 10)); err != nil {
		t.Fatalf("after refilling one unit: %v", err)
	}

	// Charged after the answer: a write of 5 units takes the full bucket
	// (2) to -3; at 2 units/s it is above zero again after 1.5 s.
	clock.Advance(time.Hour)
	if err := e.putErr(onDemand, item("n", "1", 5000)); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := e.putErr(onDemand, item("n", "2", 10)); !errors.As(err, &te) {
		t.Fatalf("1 s after going to -3: %v; want throttled", err)
	}
	clock.Advance(time.Second)
	if err := e.putErr(onDemand, item("n", "2", 10)); err != nil {
		t.Fatalf("2 s after going to -3: %v", err)
	}

	for range 2 {
		if err := e.putErr(provisioned, item("p", "1", 10)); err != nil {
			t.Fatal(err)
		}
	}
	err = e.putErr(provisioned, item("p", "2", 10))
	var pe *types.ProvisionedThroughputExceededException
	if !errors.As(err, &pe) {
		t.Fatalf("provisioned table: %v; want ProvisionedThroughputExceededException", err)
	}
	wantReason(t, pe.ThrottlingReasons, "TableWriteKeyRangeThroughputExceeded", provisionedARN)

	get := func() error {
		_, err := e.client.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String(onDemand), Key: key("b", "1"), ConsistentRead: aws.Bool(true)})
		return err
	}
	for range 2 {
		if err := get(); err != nil {
			t.Fatal(err)
		}
	}
	if err := get(); !errors.As(err, &te) {
		t.Fatalf("third strong read in a second at 2 units/s: %v; want ThrottlingException", err)
	}
	wantReason(t, te.ThrottlingReasons, "TableReadKeyRangeThroughputExceeded", onDemandARN)
}

// TestThrottleIndex: writes of items under different table keys that share
// an index key drain that key's bucket; DynamoDB then throttles the base
// table write, naming the index.
func TestThrottleIndex(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Capacity: Capacity{WriteUnits: 2}, Clock: newFakeClock()})
	tbl := e.table(t, tableSpec{index: true})
	_, indexARN := e.arns(t, tbl)
	for _, pk := range []string{"a", "b"} {
		if err := e.putErr(tbl, item(pk, "1", 10, "g", "hot")); err != nil {
			t.Fatal(err)
		}
	}
	err := e.putErr(tbl, item("c", "1", 10, "g", "hot"))
	var te *types.ThrottlingException
	if !errors.As(err, &te) {
		t.Fatalf("third write on the index key = %v; want ThrottlingException", err)
	}
	wantReason(t, te.ThrottlingReasons, "IndexWriteKeyRangeThroughputExceeded", indexARN)
	if aws.ToString(te.Message) != onDemandIndexMessage {
		t.Errorf("message %q", aws.ToString(te.Message))
	}
	if e.stored(t, tbl, "c", "1") {
		t.Error("the throttled write was applied")
	}
	if err := e.putErr(tbl, item("c", "1", 10, "g", "cold")); err != nil {
		t.Fatalf("another index key: %v", err)
	}
}

// TestThrottleTransactions: a transaction with a throttled item is
// cancelled, ThrottlingError on that item and None on the others, and
// nothing of it is applied.
func TestThrottleTransactions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Capacity: Capacity{ReadUnits: 2, WriteUnits: 2}, Clock: newFakeClock()})
	tbl := e.table(t, tableSpec{})
	for _, rk := range []string{"1", "2"} {
		if err := e.putErr(tbl, item("hot", rk, 10)); err != nil {
			t.Fatal(err)
		}
	}
	wantCancelled := func(err error, codes ...string) {
		t.Helper()
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			t.Fatalf("= %v; want TransactionCanceledException", err)
		}
		var got []string
		for _, r := range tce.CancellationReasons {
			got = append(got, aws.ToString(r.Code))
		}
		if len(got) != len(codes) || got[0] != codes[0] || got[1] != codes[1] {
			t.Fatalf("cancellation reasons %v; want %v", got, codes)
		}
	}
	_, err := e.client.TransactWriteItems(e.ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(tbl), Item: item("cold", "1", 10)}},
		{Put: &types.Put{TableName: aws.String(tbl), Item: item("hot", "3", 10)}}}})
	wantCancelled(err, "None", "ThrottlingError")
	if e.stored(t, tbl, "cold", "1") || e.stored(t, tbl, "hot", "3") {
		t.Error("a throttled transaction was applied")
	}

	get := func(pks ...string) error {
		var items []types.TransactGetItem
		for _, pk := range pks {
			items = append(items, types.TransactGetItem{Get: &types.Get{TableName: aws.String(tbl), Key: key(pk, "1")}})
		}
		_, err := e.client.TransactGetItems(e.ctx, &dynamodb.TransactGetItemsInput{TransactItems: items})
		return err
	}
	if err := get("hot"); err != nil { // 2 read units: the hot key's bucket is empty after
		t.Fatal(err)
	}
	wantCancelled(get("hot", "cold"), "ThrottlingError", "None")
}

// TestThrottleBatches: a batch forwards what is not throttled and hands
// the rest back unprocessed; when nothing can be processed it fails with
// the throttling exception.
func TestThrottleBatches(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Capacity: Capacity{ReadUnits: 1, WriteUnits: 1}, Clock: newFakeClock()})
	tbl := e.table(t, tableSpec{})
	if err := e.putErr(tbl, item("hot", "1", 10)); err != nil { // the hot key's bucket is now empty
		t.Fatal(err)
	}
	write := func(reqs ...types.WriteRequest) (*dynamodb.BatchWriteItemOutput, error) {
		return e.client.BatchWriteItem(e.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: reqs}})
	}
	out, err := write(types.WriteRequest{PutRequest: &types.PutRequest{Item: item("hot", "2", 10)}},
		types.WriteRequest{PutRequest: &types.PutRequest{Item: item("cold", "1", 10)}})
	if err != nil {
		t.Fatal(err)
	}
	if un := out.UnprocessedItems[tbl]; len(un) != 1 || un[0].PutRequest == nil || un[0].PutRequest.Item["pk"].(*types.AttributeValueMemberS).Value != "hot" {
		t.Fatalf("UnprocessedItems = %+v; want the hot put", out.UnprocessedItems)
	}
	if !e.stored(t, tbl, "cold", "1") || e.stored(t, tbl, "hot", "2") {
		t.Error("want the cold item applied and the hot one not")
	}
	_, err = write(types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key("hot", "1")}})
	var te *types.ThrottlingException
	if !errors.As(err, &te) {
		t.Fatalf("a batch all throttled = %v; want ThrottlingException", err)
	}
	if !e.stored(t, tbl, "hot", "1") {
		t.Error("a throttled delete was applied")
	}

	read := func(keys ...map[string]types.AttributeValue) (*dynamodb.BatchGetItemOutput, error) {
		return e.client.BatchGetItem(e.ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
			tbl: {Keys: keys, ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("pk, rk")}}})
	}
	if _, err := read(key("hot", "1")); err != nil { // empties the hot read bucket
		t.Fatal(err)
	}
	got, err := read(key("hot", "1"), key("cold", "1"))
	if err != nil {
		t.Fatal(err)
	}
	un := got.UnprocessedKeys[tbl]
	if len(got.Responses[tbl]) != 1 || len(un.Keys) != 1 || un.Keys[0]["pk"].(*types.AttributeValueMemberS).Value != "hot" ||
		!aws.ToBool(un.ConsistentRead) || aws.ToString(un.ProjectionExpression) != "pk, rk" {
		t.Fatalf("Responses %v, UnprocessedKeys %+v; want cold read and hot unprocessed as asked", got.Responses, un)
	}
	if _, err := read(key("hot", "1")); !errors.As(err, &te) {
		t.Fatalf("a batch read all throttled = %v; want ThrottlingException", err)
	}
}
