package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// startDynamoServe runs serve on DynamoDB with opts (its endpoint, table
// prefix and DynamoDB timeout), and returns the server and an SDK client
// that does not retry.
func startDynamoServe(t *testing.T, opts dynamostore.Options) (*limitedServer, *aztables.ServiceClient) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	cfg := serveConfig{listen: "127.0.0.1:0", storeKind: "dynamodb", accounts: auth.AccountList{auth.DevStoreAccount()},
		dynamo: dynamoFlags{opts}}
	connStr, done := startServeConfig(t, ctx, cfg)
	t.Cleanup(func() {
		stop()
		<-done
	})
	endpointURL := regexp.MustCompile(`TableEndpoint=([^;]+)`).FindStringSubmatch(connStr)[1]
	return &limitedServer{endpoint: endpointURL}, protocoltest.NewServiceClient(t, connStr)
}

// warmUp has a fresh DynamoDB Local create a table and write to it once,
// so the JVM's first, slow, requests do not run into the test's short
// DynamoDB timeout.
func warmUp(t *testing.T, endpoint string) {
	t.Helper()
	ctx := dynamolocal.Context(t, time.Minute)
	db := dynamolocal.NewClient(endpoint)
	name := aws.String("warmup")
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            name,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("k"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("k"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: name,
			Item: map[string]types.AttributeValue{"k": &types.AttributeValueMemberS{Value: fmt.Sprint(i)}}}); err != nil {
			t.Fatal(err)
		}
	}
}

// createSetupTable creates a table the test needs before its faults start.
// The server's first write to its new catalog can outlast the test's 1 s
// DynamoDB timeout on a fresh DynamoDB Local under load (make test saw
// it), which the warm-up of another table does not prevent; 503 ServerBusy
// may be an answer lost after the write, so a retry may find the table
// there.
func createSetupTable(t *testing.T, svc *aztables.ServiceClient, name string) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		_, err := svc.CreateTable(context.Background(), name, nil)
		var re *azcore.ResponseError
		switch {
		case err == nil:
			return
		case attempt > 1 && errors.As(err, &re) && re.ErrorCode == "TableAlreadyExists":
			return
		case attempt < 10 && errors.As(err, &re) && re.ErrorCode == "ServerBusy":
			continue
		}
		t.Fatalf("create table %s (attempt %d): %v", name, attempt, err)
	}
}

type answeredInsert struct {
	rowKey string
	status int
	code   string
}

// insert sends one Insert Entity, signed, without any retry.
func (s *limitedServer) insert(t *testing.T, client *http.Client, rowKey string) answeredInsert {
	body := fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q,"V":1}`, rowKey)
	req := s.signed(t, http.MethodPost, "/faults", []byte(body))
	req.Header.Set("Prefer", "return-no-content")
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("insert %s: %v", rowKey, err)
		return answeredInsert{rowKey: rowKey}
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return answeredInsert{rowKey: rowKey, status: resp.StatusCode, code: resp.Header.Get("x-ms-error-code")}
}

// TestServeDynamoDBFrozenWrites holds SECURITY.md's "What a failed write
// means" over the real server: a DynamoDB Local of the test's own is
// frozen (SIGSTOP) while inserts run.
// 503 ServerBusy tells Azure clients the operation was not performed, so
// no insert answered 503 may be stored; an insert whose request went out
// and got no answer is 500 OperationTimedOut, and may or may not be. Once
// DynamoDB Local is gone (connection refused), inserts are 503: surely not
// applied.
func TestServeDynamoDBFrozenWrites(t *testing.T) {
	t.Parallel()
	inst := dynamolocal.Private(t)
	warmUp(t, inst.Endpoint)
	s, svc := startDynamoServe(t, dynamostore.Options{Endpoint: inst.Endpoint, TablePrefix: dynamolocal.UniqueName("faults") + "-", RequestTimeout: time.Second})
	ctx := context.Background()
	createSetupTable(t, svc, "faults")

	var (
		mu       sync.Mutex
		answered []answeredInsert
		wg       sync.WaitGroup
	)
	stopWriters := make(chan struct{})
	stop := sync.OnceFunc(func() { close(stopWriters); wg.Wait() })
	defer stop() // on a failure below too: no writer outlives the test
	client := &http.Client{Timeout: 30 * time.Second}
	const writers = 6
	// answeredSince waits until n answers after the first from answers
	// satisfy ok, and returns how many answers there are by then.
	answeredSince := func(from, n int, what string, ok func(answeredInsert) bool) int {
		t.Helper()
		var total int
		if !waitFor(time.Minute, func() bool {
			mu.Lock()
			defer mu.Unlock()
			total = len(answered)
			got := 0
			for _, a := range answered[from:] {
				if ok(a) {
					got++
				}
			}
			return got >= n
		}) {
			t.Fatalf("no %d inserts answered %s within a minute", n, what)
		}
		return total
	}
	stored := func(a answeredInsert) bool { return a.status == http.StatusNoContent }
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stopWriters:
					return
				default:
				}
				a := s.insert(t, client, fmt.Sprintf("w%d-%05d", w, i))
				mu.Lock()
				answered = append(answered, a)
				mu.Unlock()
			}
		}()
	}
	// Freeze once every writer is under way, thaw after two rounds of the
	// 1 s DynamoDB timeout (an answer from each writer that is not 204),
	// and stop once inserts are stored again.
	answeredSince(0, writers, "204", stored)
	if err := inst.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	frozenAt := len(answered)
	mu.Unlock()
	thawAt := answeredSince(frozenAt, 2*writers, "other than 204 while frozen", func(a answeredInsert) bool { return !stored(a) })
	if err := inst.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	answeredSince(thawAt, writers, "204 after the thaw", stored)
	stop()

	// What the frozen DynamoDB Local had received, it applies once thawed;
	// the reads below are strongly consistent and come after.
	table := svc.NewClient("faults")
	counts := map[string]int{}
	for _, a := range answered {
		key := fmt.Sprintf("%d %s", a.status, a.code)
		counts[key]++
		_, err := table.GetEntity(ctx, "p", a.rowKey, nil)
		stored := err == nil
		switch {
		case a.status == http.StatusNoContent && !stored:
			t.Errorf("insert %s answered 204 but not stored (%v)", a.rowKey, err)
		case a.status == http.StatusServiceUnavailable && stored:
			t.Errorf("insert %s answered 503 %s but stored", a.rowKey, a.code)
		case a.status == http.StatusNoContent, a.status == http.StatusServiceUnavailable && a.code == "ServerBusy":
		case a.status == http.StatusInternalServerError && a.code == "OperationTimedOut":
		default:
			t.Errorf("insert %s answered %d %s", a.rowKey, a.status, a.code)
		}
	}
	t.Logf("answers while DynamoDB Local froze: %v", counts)
	if counts["500 OperationTimedOut"] == 0 {
		t.Errorf("no insert answered 500 OperationTimedOut while DynamoDB Local was frozen: %v", counts)
	}

	// With DynamoDB Local gone a new connection is refused: surely not
	// applied, 503. An insert sent on a connection pooled before the kill
	// may go out before the reset comes back, and its outcome is then
	// unknown to the server (500), so the first answers may be that: one
	// per connection left in the pool, each dropped once it failed. The
	// pool holds as many as were in flight at once: one per writer, and
	// those opened while DynamoDB Local was frozen (the kernel completes
	// their handshakes), so twice the writers bounds the 500s.
	inst.Stop()
	var after []answeredInsert
	for i := range 2*writers + 1 {
		a := s.insert(t, client, fmt.Sprintf("after-kill-%d", i))
		after = append(after, a)
		if a.status == http.StatusServiceUnavailable && a.code == "ServerBusy" {
			return
		}
		if a.status != http.StatusInternalServerError || a.code != "OperationTimedOut" {
			break
		}
	}
	t.Errorf("inserts with DynamoDB Local gone answered %v, want 503 ServerBusy once no pooled connection is left", after)
}

// TestServeDynamoDBCatalogLost: DynamoDB loses every table (restarted
// empty); serve re-creates the catalog and the shared table, as at first
// start, and requests work again without a restart: the tables created
// then hold entities.
func TestServeDynamoDBCatalogLost(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	prefix := dynamolocal.UniqueName("lost") + "-"
	_, svc := startDynamoServe(t, dynamostore.Options{Endpoint: endpoint, TablePrefix: prefix, RequestTimeout: 10 * time.Second})
	ctx := t.Context()
	if _, err := svc.CreateTable(ctx, "Before", nil); err != nil {
		t.Fatal(err)
	}

	// Every table of this server goes, as in a DynamoDB restarted empty.
	// (A client built as serve builds its own: DynamoDB Local keeps one
	// database per access key.)
	db, err := dynamostore.NewClient(ctx, dynamostore.Options{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	// Names sort, so this server's tables come right after its prefix.
	tables, err := db.ListTables(ctx, &dynamodb.ListTablesInput{ExclusiveStartTableName: aws.String(prefix)})
	if err != nil {
		t.Fatal(err)
	}
	deleted := 0
	for _, name := range tables.TableNames {
		if strings.HasPrefix(name, prefix) {
			if _, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
				t.Fatal(err)
			}
			gone := dynamodb.NewTableNotExistsWaiter(db)
			if err := gone.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, time.Minute); err != nil {
				t.Fatal(err)
			}
			deleted++
		}
	}
	if deleted != 2 {
		t.Fatalf("deleted %d tables, want the catalog and Before's (or the shared table)", deleted)
	}

	// The first request to find the catalog missing has it re-created and
	// is answered 503 ServerBusy, or, when that request's CORS lookup met
	// the loss first, is served from the re-created, empty, catalog.
	page, err := svc.NewListTablesPager(nil).NextPage(ctx)
	var re *azcore.ResponseError
	switch {
	case errors.As(err, &re) && re.StatusCode == http.StatusServiceUnavailable && re.ErrorCode == "ServerBusy":
	case err == nil && len(page.Tables) == 0:
	default:
		t.Fatalf("list tables with the catalog gone: %+v, %v; want 503 ServerBusy or no tables", page.Tables, err)
	}
	if _, err := svc.CreateTable(ctx, "After", nil); err != nil {
		t.Fatalf("create table once the catalog is re-created: %v", err)
	}
	page, err = svc.NewListTablesPager(nil).NextPage(ctx)
	if err != nil || len(page.Tables) != 1 || *page.Tables[0].Name != "After" {
		t.Fatalf("list tables: %+v, %v", page.Tables, err)
	}
	after := svc.NewClient("After")
	if _, err := after.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
		t.Fatalf("insert into the table created after the loss: %v", err)
	}
	if _, err := after.GetEntity(ctx, "p", "r", nil); err != nil {
		t.Fatalf("read it back: %v", err)
	}
}
