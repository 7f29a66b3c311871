package dynamoproxy

import (
	"context"
	"errors"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// onFirstAttempt faults the first attempt of every call of op.
func onFirstAttempt(op string, f Fault) Policy {
	return func(r Request) Fault {
		if r.Op == op && r.Attempt <= 1 {
			return f
		}
		return Fault{}
	}
}

// retrying gives the client attempts attempts per call, without waiting
// between them.
func retrying(attempts int) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.RetryMaxAttempts = 0
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = attempts
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			so.RateLimiter = ratelimit.None
		})
	}
}

// wantFaults checks the kinds of the faults recorded, in order.
func wantFaults(t *testing.T, p *Proxy, kinds ...FaultKind) []FaultRecord {
	t.Helper()
	recs := p.Faults()
	var got []FaultKind
	for _, r := range recs {
		got = append(got, r.Kind)
	}
	if !slices.Equal(got, kinds) {
		t.Fatalf("faults %v; want %v", got, kinds)
	}
	return recs
}

func (e *env) settle(t *testing.T) {
	t.Helper()
	if err := e.proxy.Settle(e.ctx); err != nil {
		t.Fatal(err)
	}
}

func (e *env) transactPut(ctx context.Context, table, token string, its ...map[string]types.AttributeValue) error {
	in := &dynamodb.TransactWriteItemsInput{}
	if token != "" {
		in.ClientRequestToken = aws.String(token)
	}
	for _, it := range its {
		in.TransactItems = append(in.TransactItems, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: it}})
	}
	_, err := e.client.TransactWriteItems(ctx, in)
	return err
}

// TestLoseAnswer: the write is applied and the client's connection reset;
// a transaction's retry with the same ClientRequestToken then gets the
// first attempt's success from DynamoDB.
func TestLoseAnswer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Faults: onFirstAttempt("PutItem", Fault{Kind: LoseAnswer})})
	tbl := e.table(t, tableSpec{})
	err := e.putErr(tbl, item("a", "1", 10))
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("PutItem = %v; want a reset connection", err)
	}
	if !e.stored(t, tbl, "a", "1") {
		t.Error("the write whose answer was lost is not applied")
	}
	recs := wantFaults(t, e.proxy, LoseAnswer)
	if r := recs[0]; r.Status != 200 || r.Op != "PutItem" || !slices.Equal(r.Keys, []Key{{Table: tbl, Hash: "a"}}) {
		t.Errorf("record %+v", r)
	}

	retried := newEnv(t, Config{Faults: onFirstAttempt("TransactWriteItems", Fault{Kind: LoseAnswer})}, retrying(2))
	tbl = retried.table(t, tableSpec{})
	if err := retried.transactPut(retried.ctx, tbl, "", item("t", "1", 10), item("t", "2", 10)); err != nil {
		t.Fatalf("TransactWriteItems retried after its lost answer = %v; want the first attempt's success", err)
	}
	if !retried.stored(t, tbl, "t", "2") {
		t.Error("transaction not applied")
	}
	wantFaults(t, retried.proxy, LoseAnswer)
}

// TestThrottleAndConflictFaults: neither is applied; each gets DynamoDB's
// answer. Operations that cannot conflict are not faulted.
func TestThrottleAndConflictFaults(t *testing.T) {
	t.Parallel()
	policy := func(r Request) Fault {
		if r.Op == "PutItem" || r.Op == "TransactWriteItems" && r.Token == "throttle" {
			return Fault{Kind: Throttle}
		}
		return Fault{Kind: Conflict}
	}
	e := newEnv(t, Config{Faults: policy})
	tbl := e.table(t, tableSpec{})
	var te *types.ThrottlingException
	if err := e.putErr(tbl, item("a", "1", 10)); !errors.As(err, &te) {
		t.Fatalf("PutItem = %v; want ThrottlingException", err)
	}
	var tce *types.TransactionCanceledException
	if err := e.transactPut(e.ctx, tbl, "throttle", item("a", "2", 10), item("b", "1", 10)); !errors.As(err, &tce) ||
		aws.ToString(tce.CancellationReasons[0].Code) != "ThrottlingError" || aws.ToString(tce.CancellationReasons[1].Code) != "ThrottlingError" {
		t.Fatalf("TransactWriteItems = %v; want cancelled, ThrottlingError on both items", err)
	}
	if err := e.transactPut(e.ctx, tbl, "conflict", item("a", "3", 10), item("b", "2", 10)); !errors.As(err, &tce) ||
		aws.ToString(tce.CancellationReasons[0].Code) != "TransactionConflict" || aws.ToString(tce.CancellationReasons[1].Code) != "None" {
		t.Fatalf("TransactWriteItems = %v; want cancelled, TransactionConflict then None", err)
	}
	_, err := e.client.DeleteItem(e.ctx, &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: key("a", "1")})
	var conflict *types.TransactionConflictException
	if !errors.As(err, &conflict) {
		t.Fatalf("DeleteItem = %v; want TransactionConflictException", err)
	}
	if _, err := e.client.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key("a", "1")}); err != nil {
		t.Fatalf("GetItem under a Conflict policy = %v; want no fault", err)
	}
	for _, k := range [][2]string{{"a", "1"}, {"a", "2"}, {"a", "3"}, {"b", "1"}, {"b", "2"}} {
		if e.stored(t, tbl, k[0], k[1]) {
			t.Errorf("%v applied", k)
		}
	}
	wantFaults(t, e.proxy, Throttle, Throttle, Conflict, Conflict)
	if u := e.proxy.Stats().Keys[Key{Table: tbl, Hash: "a"}]; u.Throttles != 2 || u.Requests != 1 {
		t.Errorf("usage of key a = %+v; want 2 throttles and the one GetItem", u)
	}
}

// TestInFlight: the connection breaks at once and the transaction lands
// later. Its retry, arriving while the first attempt is held, is told
// TransactionInProgressException, as DynamoDB tells a retry whose first
// attempt still runs; that releases the first attempt.
func TestInFlight(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Faults: onFirstAttempt("TransactWriteItems", Fault{Kind: InFlight})}, retrying(2))
	tbl := e.table(t, tableSpec{})
	err := e.transactPut(e.ctx, tbl, "", item("t", "1", 10), item("t", "2", 10))
	var tip *types.TransactionInProgressException
	if !errors.As(err, &tip) {
		t.Fatalf("TransactWriteItems = %v; want TransactionInProgressException on the retry", err)
	}
	e.settle(t)
	if !e.stored(t, tbl, "t", "1") || !e.stored(t, tbl, "t", "2") {
		t.Error("the transaction in flight did not land")
	}
	recs := wantFaults(t, e.proxy, InFlight, InProgress)
	if recs[0].Token == "" || recs[1].Token != recs[0].Token || recs[0].Status != 200 {
		t.Errorf("records %+v; want the same token, the first applied", recs)
	}

	// Without a token nothing waits for a retry: the write goes on at once,
	// or after the fault's delay.
	single := newEnv(t, Config{Faults: onFirstAttempt("PutItem", Fault{Kind: InFlight, Delay: 10 * time.Millisecond})})
	tbl = single.table(t, tableSpec{})
	if err := single.putErr(tbl, item("p", "1", 10)); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("PutItem = %v; want a reset connection", err)
	}
	single.settle(t)
	if !single.stored(t, tbl, "p", "1") {
		t.Error("the write in flight did not land")
	}
}

// TestSlow: DynamoDB runs past the client's deadline, before applying the
// write or after; either way the write lands.
func TestSlow(t *testing.T) {
	t.Parallel()
	for _, after := range []bool{false, true} {
		e := newEnv(t, Config{Faults: onFirstAttempt("PutItem", Fault{Kind: Slow, AfterApply: after})})
		tbl := e.table(t, tableSpec{})
		// Warm up (the table described, a connection open), so the write
		// reaches the proxy well within its deadline.
		if _, err := e.client.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key("s", "1")}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(e.ctx, time.Second)
		_, err := e.client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: item("s", "1", 10)})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("AfterApply %t: PutItem = %v; want the deadline exceeded", after, err)
		}
		e.settle(t)
		if !e.stored(t, tbl, "s", "1") {
			t.Errorf("AfterApply %t: the slow write did not land", after)
		}
		if recs := wantFaults(t, e.proxy, Slow); recs[0].Status != 200 || recs[0].AfterApply != after {
			t.Errorf("record %+v", recs[0])
		}
	}
}

// TestRandomFaultsThroughProxy: a seeded policy faults a stream of
// writes; every fault is listed, and after Settle each write is applied
// exactly when its fault lets it be.
func TestRandomFaultsThroughProxy(t *testing.T) {
	t.Parallel()
	rates := FaultRates{Throttle: 0.2, LoseAnswer: 0.2, InFlight: 0.2, Conflict: 0.2, Slow: 0.1, Delay: time.Millisecond}
	e := newEnv(t, Config{Faults: RandomFaults(42, rates)})
	tbl := e.table(t, tableSpec{})
	const n = 40
	for i := range n {
		_ = e.putErr(tbl, item("r", string(rune('A'+i)), 10))
	}
	e.settle(t)
	recs := e.proxy.Faults()
	for _, r := range recs {
		if r.Op != "PutItem" || !slices.Equal(r.Keys, []Key{{Table: tbl, Hash: "r"}}) {
			t.Fatalf("record %+v", r)
		}
	}
	if len(recs) == 0 || len(recs) == n {
		t.Fatalf("%d of %d writes faulted at a total rate of 0.9", len(recs), n)
	}
	applied := 0
	for i := range n {
		if e.stored(t, tbl, "r", string(rune('A'+i))) {
			applied++
		}
	}
	notApplied := 0
	for _, r := range recs {
		if r.Kind == Throttle || r.Kind == Conflict {
			notApplied++
		}
	}
	if applied != n-notApplied {
		t.Errorf("%d writes applied; want %d (all but the %d throttled or in conflict)", applied, n-notApplied, notApplied)
	}
}
