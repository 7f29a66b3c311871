package dynamoproxy

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

// rawCall sends one JSON 1.0 request to the proxy as the SDK would, signed
// with the local clients' credential scope (DynamoDB Local does not check
// the signature), and checks that the answer's X-Amz-Crc32 is its body's.
func rawCall(t *testing.T, url, op, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Target", targetPrefix+op)
	req.Header.Set("Content-Type", jsonContentType)
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=tablebridge/20260101/"+dynamolocal.Region+
		"/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0000")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := resp.Header.Get(crcHeader), strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10); got != want {
		t.Errorf("%s: X-Amz-Crc32 %q; the body's is %s", op, got, want)
	}
	return resp.StatusCode, string(b)
}

// TestAnswersCarryCRC: every answer's X-Amz-Crc32 matches its body: one the
// proxy rewrote (the old item it asked for taken out), one it made (a
// throttle), and an error DynamoDB Local sends without a CRC. The SDK
// clients of the other tests check it too.
func TestAnswersCarryCRC(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Capacity: Capacity{WriteUnits: 1}, Clock: newFakeClock()})
	tbl := e.table(t, tableSpec{index: true})
	put := `{"TableName":"` + tbl + `","Item":{"pk":{"S":"a"},"rk":{"S":"1"},"g":{"S":"<&>"}}}`
	if status, body := rawCall(t, e.proxy.URL(), "PutItem", put); status != 200 || body != "{}" {
		t.Errorf("PutItem = %d %s; want 200 {} (the proxy's ReturnValues and ConsumedCapacity taken out)", status, body)
	}
	get := `{"TableName":"` + tbl + `","Key":{"pk":{"S":"a"},"rk":{"S":"1"}}}`
	if status, body := rawCall(t, e.proxy.URL(), "GetItem", get); status != 200 || !strings.Contains(body, `"<&>"`) {
		t.Errorf("GetItem = %d %s; want the item as DynamoDB Local wrote it", status, body)
	}
	if status, body := rawCall(t, e.proxy.URL(), "PutItem", put); status != 400 || !strings.Contains(body, "ThrottlingException") {
		t.Errorf("PutItem = %d %s; want throttled", status, body)
	}
	if status, body := rawCall(t, e.proxy.URL(), "DescribeTable", `{"TableName":"no-such-table"}`); status != 400 || !strings.Contains(body, "ResourceNotFoundException") {
		t.Errorf("DescribeTable = %d %s", status, body)
	}
}

// TestForwardKeepsSignedHost: the upstream sees the Host the client signed
// (the proxy's), the client's headers and the body. The upstream here is a
// recorder, not DynamoDB: what is tested is what the proxy sends.
func TestForwardKeepsSignedHost(t *testing.T) {
	t.Parallel()
	type seen struct {
		host, target, auth, encoding string
		body                         []byte
	}
	got := make(chan seen, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Host, r.Header.Get("X-Amz-Target"), r.Header.Get("Authorization"), r.Header.Get("Accept-Encoding"), b}
		w.Header().Set("Content-Type", jsonContentType)
		_, _ = w.Write([]byte(`{"TableNames":[]}`))
	}))
	t.Cleanup(up.Close)
	p, err := Start(Config{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	client := dynamolocal.NewClient(p.URL(), func(o *dynamodb.Options) { o.DisableValidateResponseChecksum = false })
	if _, err := client.ListTables(dynamolocal.Context(t, 30*time.Second), &dynamodb.ListTablesInput{Limit: aws.Int32(5)}); err != nil {
		t.Fatal(err)
	}
	s := <-got
	if want := strings.TrimPrefix(p.URL(), "http://"); s.host != want {
		t.Errorf("upstream saw Host %q; want the proxy's %q, which the client signed", s.host, want)
	}
	if s.target != targetPrefix+"ListTables" || !strings.Contains(s.auth, "Credential=tablebridge/") || s.encoding != "" ||
		!bytes.Equal(s.body, []byte(`{"Limit":5}`)) {
		t.Errorf("upstream saw %+v", s)
	}
	if st := p.Stats(); st.Ops["ListTables"] != 1 || st.Requests != 0 {
		t.Errorf("stats %+v; want one control-plane call, no item request", st)
	}
}

// TestScanAndHottest: a Scan counts on its table as a whole; the hottest
// key of a workload is the one most of its requests touched.
func TestScanAndHottest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	tbl := e.table(t, tableSpec{})
	e.put(t, tbl, item("a", "1", 3000))
	s := e.usage(t, func() {
		if _, err := e.client.Scan(e.ctx, &dynamodb.ScanInput{TableName: aws.String(tbl), ConsistentRead: aws.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	})
	wantUnits(t, s, map[Key]units{{Table: tbl}: {read: 1}})

	s = e.usage(t, func() {
		for i := range 6 {
			pk := "a"
			if i%3 == 2 {
				pk = "b"
			}
			if _, err := e.client.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key(pk, "1")}); err != nil {
				t.Fatal(err)
			}
		}
	})
	if k, u, share := s.Hottest(); k != (Key{Table: tbl, Hash: "a"}) || u.Requests != 4 || share != 4.0/6 || s.Ops["GetItem"] != 6 {
		t.Errorf("Hottest = %v %+v %v (ops %v); want key a with 4 of 6", k, u, share, s.Ops)
	}
}

// TestSchemaFollowsTableChanges: a table deleted and created again through
// the proxy with an index is described again, so its index writes count.
func TestSchemaFollowsTableChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	tbl := e.table(t, tableSpec{})
	if err := e.putErr(tbl, item("a", "1", 10, "g", "x")); err != nil {
		t.Fatal(err)
	}
	desc, err := e.direct.DescribeTable(e.ctx, &dynamodb.DescribeTableInput{TableName: aws.String(tbl)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.client.DeleteTable(e.ctx, &dynamodb.DeleteTableInput{TableName: aws.String(tbl)}); err != nil {
		t.Fatal(err)
	}
	_, err = e.client.CreateTable(e.ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(tbl), BillingMode: types.BillingModePayPerRequest, KeySchema: desc.Table.KeySchema,
		AttributeDefinitions: append(desc.Table.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS}),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("byG"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := e.usage(t, func() {
		if err := e.putErr(tbl, item("a", "1", 10, "g", "x")); err != nil {
			t.Fatal(err)
		}
	})
	wantUnits(t, s, map[Key]units{{Table: tbl, Hash: "a"}: {write: 1}, {Table: tbl, Index: "byG", Hash: "x"}: {write: 1}})
}

// TestConcurrentUse: clients at once, every operation kind, the capacity
// model and random faults together (run with -race). Afterwards every
// request has settled, each fault that lets a request through saw it
// applied, and the proxy never failed a request of its own accord.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	rates := FaultRates{Throttle: 0.05, LoseAnswer: 0.05, InFlight: 0.05, Conflict: 0.05, Slow: 0.05, Delay: 2 * time.Millisecond}
	e := newEnv(t, Config{Capacity: Capacity{ReadUnits: 40, WriteUnits: 40}, Faults: RandomFaults(1, rates)}, retrying(3))
	tbl := e.table(t, tableSpec{index: true})
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Go(func() {
			for i := range 15 {
				pk, rk := fmt.Sprintf("k%d", (c+i)%4), fmt.Sprintf("%d-%d", c, i)
				var err error
				switch i % 5 {
				case 0:
					err = e.putErr(tbl, item(pk, rk, 100, "g", pk))
				case 1:
					_, err = e.client.GetItem(e.ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: key(pk, rk)})
				case 2:
					_, err = e.client.Query(e.ctx, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("byG"),
						KeyConditionExpression:    aws.String("g = :g"),
						ExpressionAttributeValues: map[string]types.AttributeValue{":g": &types.AttributeValueMemberS{Value: pk}}})
				case 3:
					err = e.transactPut(e.ctx, tbl, "", item(pk, rk, 100, "g", "t"), item(pk, rk+"b", 100))
				case 4:
					_, err = e.client.BatchWriteItem(e.ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
						{DeleteRequest: &types.DeleteRequest{Key: key(pk, fmt.Sprintf("%d-%d", c, i-4))}},
						{PutRequest: &types.PutRequest{Item: item("other", rk, 100, "g", pk)}}}}})
				}
				var api smithy.APIError
				if errors.As(err, &api) && api.ErrorFault() == smithy.FaultServer {
					t.Errorf("client %d op %d: %v", c, i, err)
				}
			}
		})
	}
	wg.Wait()
	e.settle(t)
	kinds := map[FaultKind]int{}
	for _, r := range e.proxy.Faults() {
		kinds[r.Kind]++
		if (r.Kind == LoseAnswer || r.Kind == InFlight || r.Kind == Slow) && r.Status == 0 {
			t.Errorf("fault %+v let its request through but it was not forwarded", r)
		}
	}
	st := e.proxy.Stats()
	throttles := int64(0)
	for _, u := range st.Keys {
		throttles += u.Throttles
	}
	t.Logf("faults %v; %d requests forwarded, %d throttled on keys; by operation %v", kinds, st.Requests, throttles, st.Ops)
	if st.Requests == 0 || len(st.Keys) == 0 || len(kinds) == 0 {
		t.Errorf("stats %+v, faults %v: the workload did not run", st, kinds)
	}
}
