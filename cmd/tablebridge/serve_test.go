package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
)

// startServe runs serve on a free loopback port and returns the connection
// string it printed and a channel with serve's result.
func startServe(t *testing.T, ctx context.Context, dataDir string) (string, <-chan error) {
	t.Helper()
	return startServeConfig(t, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: dataDir, storeKind: "bolt",
		accounts: auth.AccountList{auth.DevStoreAccount()}})
}

func startServeConfig(t testing.TB, ctx context.Context, cfg serveConfig) (string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := serve(ctx, cfg, pw)
		pw.CloseWithError(errors.New("serve returned"))
		done <- err
	}()
	connRe := regexp.MustCompile(`DefaultEndpointsProtocol=\S+`)
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if m := connRe.FindString(sc.Text()); m != "" {
			go func() { _, _ = io.Copy(io.Discard, pr) }()
			return m, done
		}
	}
	t.Fatalf("serve printed no connection string: %v (serve: %v)", sc.Err(), <-done)
	return "", nil
}

func TestServeShutdownKeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, stop := context.WithCancel(context.Background())
	connStr, done := startServe(t, ctx, dir)
	if !strings.Contains(connStr, "AccountName=devstoreaccount1;") || !strings.Contains(connStr, "TableEndpoint=http://127.0.0.1:") {
		t.Fatalf("connection string %q", connStr)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "shutdown", nil); err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient("shutdown")

	// Writers insert until the server goes away; every insert answered 201
	// must be on disk after shutdown.
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
	)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				rk := fmt.Sprintf("w%d-%06d", w, i)
				body := fmt.Sprintf(`{"PartitionKey":"p","RowKey":%q,"N":%d}`, rk, i)
				if _, err := client.AddEntity(context.Background(), []byte(body), nil); err != nil {
					return
				}
				mu.Lock()
				acked = append(acked, rk)
				mu.Unlock()
			}
		}()
	}
	// Shut down while the writers are under way: once some inserts are
	// acknowledged.
	if !waitFor(time.Minute, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) >= 16
	}) {
		stop()
		wg.Wait()
		t.Fatal("no 16 inserts acknowledged within a minute")
	}
	stop() // what SIGINT/SIGTERM do
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no insert was acknowledged before shutdown")
	}

	st, err := boltstore.Open(filepath.Join(dir, "tablebridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, rk := range acked {
		if _, err := st.GetEntity(context.Background(), "devstoreaccount1", "shutdown", "p", rk); err != nil {
			t.Fatalf("acknowledged insert %s lost: %v", rk, err)
		}
	}
	t.Logf("%d acknowledged inserts survived shutdown", len(acked))
}

func TestServeRejectsBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"-store", "nosuch"},
		{"-account", "BAD:key"},
		{"-account", "devstoreaccount1:%%%"},
		{"extra"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if err := runServe(append([]string{"-listen", "127.0.0.1:0", "-data", t.TempDir()}, args...)); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestMain(m *testing.M) {
	// Migration checkpoints go to the state directory: a throwaway one,
	// for the child processes too.
	state, err := os.MkdirTemp("", "tablebridge-state-")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := serveproc.Main(m)
	os.RemoveAll(state)
	os.Exit(code)
}

// TestServeOnDynamoDB runs serve with -store dynamodb against DynamoDB Local
// and drives it with the SDK: the flags, the client chain with an endpoint,
// and the store wiring.
func TestServeOnDynamoDB(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	cfg := serveConfig{listen: "127.0.0.1:0", storeKind: "dynamodb",
		accounts: auth.AccountList{auth.DevStoreAccount()},
		dynamo:   dynamoFlags{dynamostore.Options{Endpoint: endpoint, TablePrefix: dynamolocal.UniqueName("serve") + "-"}}}
	connStr, done := startServeConfig(t, ctx, cfg)
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(ctx, "OnDynamo", nil); err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient("ondynamo")
	if _, err := client.AddEntity(ctx, []byte(`{"PartitionKey":"p","RowKey":"r","Big@odata.type":"Edm.Int64","Big":"9223372036854775807"}`), nil); err != nil {
		t.Fatal(err)
	}
	got, err := client.GetEntity(ctx, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got.Value), `"Big":"9223372036854775807"`) {
		t.Fatalf("entity %s", got.Value)
	}
	pager := svc.NewListTablesPager(nil)
	page, err := pager.NextPage(ctx)
	if err != nil || len(page.Tables) != 1 || *page.Tables[0].Name != "OnDynamo" {
		t.Fatalf("tables %+v, %v", page.Tables, err)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}
