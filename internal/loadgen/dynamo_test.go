package loadgen

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
)

// directConfig is smallConfig in direct DynamoDB mode. The Azure endpoint
// and key are left invalid to show direct mode ignores them.
func directConfig(endpoint string) Config {
	cfg := smallConfig("not a url")
	cfg.DynamoDBEndpoint = endpoint
	cfg.Account, cfg.Key = "", ""
	// The table's name follows from the prefix and the seed: a prefix of
	// its own keeps tests running in parallel, and other test binaries on
	// the same DynamoDB Local, off each other's table.
	cfg.TablePrefix = "bench" + strings.ReplaceAll(dynamolocal.UniqueName(""), "-", "x")
	return cfg
}

func TestDirectDynamoDBRun(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	ctx := dynamolocal.Context(t, 2*time.Minute)
	client := dynamolocal.NewClient(endpoint)
	cfg := directConfig(endpoint)
	cfg.KeepTable = true
	var progress bytes.Buffer
	report, err := Run(ctx, cfg, &progress)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, progress.String())
	}
	t.Cleanup(func() {
		client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(report.Table)})
	})
	if report.Failed() || report.Mode != ModeDirectDynamoDB || report.Account != "" {
		t.Fatalf("mode %q account %q phases %+v", report.Mode, report.Account, report.Phases)
	}
	// 25 rows of ~500 B fit one Query page (DynamoDB pages at 1 MB).
	wantPhases(t, report, 12, []phaseCounts{
		{PhaseInsert, 12, 12},
		{PhaseGet, 12, 12},
		{PhaseQuery, 12 * 25, 12},
		{PhaseBatch, 12 * 10, 12},
	})
	t.Run("items are native attributes", func(t *testing.T) {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName:      aws.String(report.Table),
			Key:            keyOf("i0000-000000", "0000000000"),
			ConsistentRead: aws.Bool(true),
		})
		if err != nil || out.Item == nil {
			t.Fatalf("GetItem: %v, item %v", err, out.Item)
		}
		kinds := map[string]string{}
		for name, v := range out.Item {
			kinds[name] = typeName(v)
		}
		wantKinds := map[string]string{
			"PartitionKey": "S", "RowKey": "S", "Name": "S", "City": "S", "Active": "BOOL", "Count": "N",
			"Total": "N", "Price": "N", "Created": "S", "Ref": "S", "Blob": "B",
		}
		if !maps.Equal(kinds, wantKinds) {
			t.Errorf("attribute types %v, want %v", kinds, wantKinds)
		}
	})
	t.Run("data written", func(t *testing.T) {
		// Insert and batch partitions plus the 3 seed partitions of 25 rows.
		out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(report.Table), Select: types.SelectCount})
		if err != nil {
			t.Fatal(err)
		}
		if want := int32(12 + 12*10 + 3*25); out.Count != want || out.LastEvaluatedKey != nil {
			t.Errorf("table holds %d items, want %d", out.Count, want)
		}
	})
}

func TestDirectDynamoDBDeletesItsTable(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	ctx := dynamolocal.Context(t, time.Minute)
	cfg := directConfig(endpoint)
	cfg.Phases = []Phase{PhaseInsert}
	cfg.Ops = 3
	report, err := Run(ctx, cfg, nil)
	if err != nil || report.Failed() {
		t.Fatalf("Run: %v, report %+v", err, report)
	}
	out, err := dynamolocal.NewClient(endpoint).ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(out.TableNames, report.Table) {
		t.Errorf("table %s left behind", report.Table)
	}
	var text bytes.Buffer
	if err := report.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(text.String(), "mode direct-dynamodb ") {
		t.Errorf("header does not name the mode:\n%s", text.String())
	}
}

// TestDirectDynamoDBFailures drives the target's operations one by one
// into the failures a correct run never meets.
func TestDirectDynamoDBFailures(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	ctx := dynamolocal.Context(t, time.Minute)
	r := newTestRun(t, "", func(c *Config) {
		c.Endpoint, c.DynamoDBEndpoint = "", endpoint
		c.PartitionSize, c.BatchSize = 4, 2
	})
	w := r.newWorker(0)
	if err := r.target.createTable(ctx, w); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.target.deleteTable(context.Background(), w) })

	t.Run("create existing table", func(t *testing.T) {
		err := r.target.createTable(ctx, w)
		wantStatusError(t, err, "create table", 400, "ResourceInUseException")
	})
	t.Run("insert existing", func(t *testing.T) {
		w.next = 0
		if _, err := w.insertOne(ctx); err != nil {
			t.Fatal(err)
		}
		w.next = 0
		_, err := w.insertOne(ctx)
		wantStatusError(t, err, "insert", 400, "ConditionalCheckFailedException")
	})
	t.Run("batch over existing", func(t *testing.T) {
		pk := appendPartitionKey(nil, kindBatch, 0, 0)
		if err := r.target.writeBatch(ctx, w, pk, 0, 2); err != nil {
			t.Fatal(err)
		}
		err := r.target.writeBatch(ctx, w, pk, 1, 2) // row 1 exists
		wantStatusError(t, err, "batch", 400, "TransactionCanceledException")
	})
	t.Run("get missing", func(t *testing.T) {
		w.pk, w.rk = []byte("nope"), []byte("nope")
		if err := r.target.get(ctx, w); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("got %v, want not found", err)
		}
	})
	t.Run("short partition scan", func(t *testing.T) {
		r.seeded = true // pretend: the seed partitions are empty
		if _, err := w.scanPartition(ctx); err == nil || !strings.Contains(err.Error(), "returned 0 rows, want 4") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("errors group without request ids", func(t *testing.T) {
		var log errorLog
		for range 3 {
			w.next = 0
			_, err := w.insertOne(ctx)
			log.add(err)
		}
		if s := log.samples(5); len(s) != 1 || s[0].Count != 3 {
			t.Errorf("samples %+v, want one message x3", s)
		}
	})
}

func TestDirectDynamoDBUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	cfg := directConfig("http://" + addr)
	cfg.RequestTimeout = 5 * time.Second
	_, err = Run(context.Background(), cfg, nil)
	if err == nil || !strings.Contains(err.Error(), "create table") {
		t.Fatalf("got %v, want a create table error", err)
	}
}

func TestDirectDynamoDBConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		adjust  func(*Config)
		wantErr string
	}{
		{"azure fields ignored", func(c *Config) {}, ""},
		{"remote refused", func(c *Config) { c.DynamoDBEndpoint = "http://10.1.2.3:8000" }, "not a loopback address"},
		{"remote allowed", func(c *Config) { c.DynamoDBEndpoint, c.AllowRemote = "http://10.1.2.3:8000", true }, ""},
		{"bad scheme", func(c *Config) { c.DynamoDBEndpoint = "ftp://127.0.0.1:8000" }, "scheme must be http or https"},
		{"no clients", func(c *Config) { c.Clients = 0 }, "clients 0 out of range"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := directConfig("http://127.0.0.1:8000")
			c.adjust(&cfg)
			_, _, err := cfg.validate()
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("got %v, want %q", err, c.wantErr)
			}
			if c.name == "remote refused" && !errors.Is(err, ErrRemoteEndpoint) {
				t.Errorf("%v is not ErrRemoteEndpoint", err)
			}
		})
	}
}

func TestDynamoProps(t *testing.T) {
	t.Parallel()
	v := entityValues{Name: "bench", City: "c7", Active: true, Count: 42, Total: 1<<60 + 3, Price: 12.25,
		Created: "2024-05-01T12:34:56.1234567Z", Ref: "r", Blob: []byte{1, 2}}
	t.Run("unpadded leaves Payload out", func(t *testing.T) {
		props := dynamoProps(&v)
		if _, ok := props["Payload"]; ok || len(props) != 9 {
			t.Errorf("props %v", props)
		}
		checks := map[string]string{"Count": "42", "Total": "1152921504606846979", "Price": "12.25"}
		for name, want := range checks {
			if n, ok := props[name].(*types.AttributeValueMemberN); !ok || n.Value != want {
				t.Errorf("%s = %#v, want N %s", name, props[name], want)
			}
		}
	})
	t.Run("padded", func(t *testing.T) {
		v := v
		v.Payload = "xyz"
		if p, ok := dynamoProps(&v)["Payload"].(*types.AttributeValueMemberS); !ok || p.Value != "xyz" {
			t.Errorf("Payload %#v", p)
		}
	})
	t.Run("items do not share keys", func(t *testing.T) {
		d := &dynamoTarget{props: dynamoProps(&v)}
		a, b := d.item([]byte("p"), []byte("1")), d.item([]byte("p"), []byte("2"))
		if a["RowKey"].(*types.AttributeValueMemberS).Value != "1" || b["RowKey"].(*types.AttributeValueMemberS).Value != "2" || len(a) != 11 {
			t.Errorf("items %v %v", a, b)
		}
	})
}

func keyOf(pk, rk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"PartitionKey": &types.AttributeValueMemberS{Value: pk},
		"RowKey":       &types.AttributeValueMemberS{Value: rk},
	}
}

func typeName(v types.AttributeValue) string {
	switch v.(type) {
	case *types.AttributeValueMemberS:
		return "S"
	case *types.AttributeValueMemberN:
		return "N"
	case *types.AttributeValueMemberBOOL:
		return "BOOL"
	case *types.AttributeValueMemberB:
		return "B"
	}
	return "other"
}

func wantStatusError(t *testing.T, err error, op string, status int, code string) {
	t.Helper()
	var se *statusError
	if !errors.As(err, &se) || se.Op != op || se.Status != status || se.Code != code {
		t.Errorf("got %v (%#v), want %s: HTTP %d %s", err, se, op, status, code)
	}
}
