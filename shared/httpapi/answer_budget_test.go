package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// budgetServers runs test against a server with the given answer budget
// on each store: the embedded bbolt store and DynamoDB Local.
func budgetServers(t *testing.T, budget int, test func(t *testing.T, s *protocoltest.Server)) {
	t.Run("bolt", func(t *testing.T) { test(t, protocoltest.New(t, tablebridgetest.WithAnswerBudget(budget))) })
	t.Run("dynamodb", func(t *testing.T) {
		if testing.Short() {
			t.Skip("DynamoDB Local skipped in -short mode")
		}
		st, err := dynamostore.New(dynamolocal.Context(t, 2*time.Minute), dynamolocal.Client(t), dynamostore.Options{
			TablePrefix: dynamolocal.UniqueName("budget") + "-", Endpoint: dynamolocal.Endpoint(t),
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		test(t, protocoltest.New(t, tablebridgetest.WithStore(st), tablebridgetest.WithAnswerBudget(budget)))
	})
}

// TestAnswerBudgetEndsEntityPages: a query page whose answer would pass the
// budget ends early with a continuation naming the last entity sent, and
// the next page starts at the first entity not sent. Every entity is read
// once, in order, by the SDK's pager and by raw requests at every metadata
// level, and every answer body stays within the budget.
func TestAnswerBudgetEndsEntityPages(t *testing.T) {
	t.Parallel()
	const budget, n = 8 << 10, 40
	budgetServers(t, budget, func(t *testing.T, s *protocoltest.Server) {
		ctx := context.Background()
		table := fmt.Sprintf("budget%d", time.Now().UnixNano()%1e9)
		tc := s.Client().NewClient(table)
		if _, err := tc.CreateTable(ctx, nil); err != nil {
			t.Fatal(err)
		}
		// One partition, so both stores return key order.
		for i := range n {
			e := map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprintf("r%03d", i), "Text": strings.Repeat("x", 900),
				"Big": fmt.Sprint(int64(i) << 40), "Big@odata.type": "Edm.Int64"}
			b, _ := json.Marshal(e)
			if _, err := tc.AddEntity(ctx, b, nil); err != nil {
				t.Fatal(err)
			}
		}

		pager := tc.NewListEntitiesPager(nil)
		var keys []string
		pages := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, raw := range page.Entities {
				var e struct{ RowKey string }
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatal(err)
				}
				keys = append(keys, e.RowKey)
			}
		}
		wantKeys(t, keys, n)
		if pages < 4 {
			t.Errorf("%d pages for %d entities of about 1 KB under an 8 KiB budget", pages, n)
		}

		for _, accept := range []string{"application/json;odata=nometadata", "application/json;odata=minimalmetadata", "application/json;odata=fullmetadata"} {
			t.Run(accept, func(t *testing.T) {
				var keys []string
				q := url.Values{}
				for range 100 {
					resp := s.Do(t, protocoltest.Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: q.Encode(),
						Header: http.Header{"Accept": {accept}}})
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
					}
					if len(resp.Body) > budget {
						t.Errorf("answer of %d bytes, budget %d", len(resp.Body), budget)
					}
					var page struct{ Value []struct{ RowKey string } }
					if err := json.Unmarshal(resp.Body, &page); err != nil {
						t.Fatal(err)
					}
					for _, e := range page.Value {
						keys = append(keys, e.RowKey)
					}
					npk := resp.Header.Get("x-ms-continuation-NextPartitionKey")
					if npk == "" {
						break
					}
					q = url.Values{"NextPartitionKey": {npk}, "NextRowKey": {resp.Header.Get("x-ms-continuation-NextRowKey")}}
				}
				wantKeys(t, keys, n)
			})
		}
	})
}

// TestAnswerBudgetSendsOneEntity: an entity larger than the whole budget
// is still sent, alone on its page, so a query always makes progress.
func TestAnswerBudgetSendsOneEntity(t *testing.T) {
	t.Parallel()
	budgetServers(t, 1<<10, func(t *testing.T, s *protocoltest.Server) {
		ctx := context.Background()
		table := fmt.Sprintf("budgetone%d", time.Now().UnixNano()%1e9)
		tc := s.Client().NewClient(table)
		if _, err := tc.CreateTable(ctx, nil); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": fmt.Sprint(i), "Text": strings.Repeat("y", 4000)})
			if _, err := tc.AddEntity(ctx, b, nil); err != nil {
				t.Fatal(err)
			}
		}
		pager := tc.NewListEntitiesPager(nil)
		var sizes []int
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(page.Entities))
		}
		if fmt.Sprint(sizes) != "[1 1 1]" && fmt.Sprint(sizes) != "[1 1 1 0]" {
			t.Errorf("page sizes %v, want one entity per page", sizes)
		}
	})
}

// TestAnswerBudgetEndsTablePages: Query Tables pages end within the budget
// with a NextTableName naming the last table sent, and every table is
// listed once.
func TestAnswerBudgetEndsTablePages(t *testing.T) {
	t.Parallel()
	const budget, n = 1 << 10, 30
	budgetServers(t, budget, func(t *testing.T, s *protocoltest.Server) {
		ctx := context.Background()
		sc := s.Client()
		prefix := fmt.Sprintf("bt%d", time.Now().UnixNano()%1e9)
		for i := range n {
			if _, err := sc.CreateTable(ctx, fmt.Sprintf("%sx%02d", prefix, i), nil); err != nil {
				t.Fatal(err)
			}
		}
		var names []string
		q := url.Values{}
		pages := 0
		for range 100 {
			resp := s.Do(t, protocoltest.Request{Method: http.MethodGet, Path: "/Tables", RawQuery: q.Encode(),
				Header: http.Header{"Accept": {"application/json;odata=fullmetadata"}}})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
			}
			pages++
			if len(resp.Body) > budget {
				t.Errorf("answer of %d bytes, budget %d", len(resp.Body), budget)
			}
			var page struct{ Value []struct{ TableName string } }
			if err := json.Unmarshal(resp.Body, &page); err != nil {
				t.Fatal(err)
			}
			for _, tb := range page.Value {
				if strings.HasPrefix(tb.TableName, prefix) {
					names = append(names, tb.TableName)
				}
			}
			next := resp.Header.Get("x-ms-continuation-NextTableName")
			if next == "" {
				break
			}
			q = url.Values{"NextTableName": {next}}
		}
		if len(names) != n {
			t.Fatalf("listed %d of %d tables: %v", len(names), n, names)
		}
		for i, name := range names {
			if want := fmt.Sprintf("%sx%02d", prefix, i); name != want {
				t.Fatalf("table %d is %s, want %s", i, name, want)
			}
		}
		if pages < 3 {
			t.Errorf("%d pages for %d tables under a 1 KiB budget", pages, n)
		}
		// The SDK's pager follows the same continuation.
		pager := sc.NewListTablesPager(&aztables.ListTablesOptions{Filter: ptr(fmt.Sprintf("TableName ge '%s' and TableName lt '%sy'", prefix, prefix))})
		count := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			count += len(page.Tables)
		}
		if count != n {
			t.Errorf("SDK listed %d of %d tables", count, n)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func wantKeys(t *testing.T, keys []string, n int) {
	t.Helper()
	if len(keys) != n {
		t.Fatalf("read %d entities, want %d: %v", len(keys), n, keys)
	}
	for i, k := range keys {
		if want := fmt.Sprintf("r%03d", i); k != want {
			t.Fatalf("entity %d is %s, want %s (a page skipped or repeated one)", i, k, want)
		}
	}
}

// TestAnswerBudgetBatchDeclinesContent: a batch of inserts that asked for
// their entities back, whose answer would pass the budget, is still applied
// and answered 202, each insert as 204 with its ETag, Location and
// Preference-Applied: return-no-content; within the budget the entities
// come back (201).
func TestAnswerBudgetBatchDeclinesContent(t *testing.T) {
	t.Parallel()
	const budget = 8 << 10
	budgetServers(t, budget, func(t *testing.T, s *protocoltest.Server) {
		for _, tc := range []struct {
			ops         int
			wantCreated bool
		}{{ops: 2, wantCreated: true}, {ops: 40, wantCreated: false}} {
			t.Run(fmt.Sprint(tc.ops), func(t *testing.T) {
				table := fmt.Sprintf("budgetbatch%d", time.Now().UnixNano()%1e9)
				if _, err := s.Client().CreateTable(context.Background(), table, nil); err != nil {
					t.Fatal(err)
				}
				tmpl := newBatchTemplate(table, tc.ops)
				body := bytes.ReplaceAll(tmpl.body, []byte("Prefer: return-no-content"), []byte("Prefer: return-content   "))
				resp := s.Do(t, protocoltest.Request{Method: http.MethodPost, Path: "/$batch", Body: body,
					Header: http.Header{"Content-Type": {tmpl.contentType}}})
				if resp.StatusCode != http.StatusAccepted {
					t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
				}
				created := bytes.Count(resp.Body, []byte("HTTP/1.1 201 Created"))
				noContent := bytes.Count(resp.Body, []byte("HTTP/1.1 204 No Content"))
				declined := bytes.Count(resp.Body, []byte("Preference-Applied: return-no-content"))
				switch {
				case tc.wantCreated && created != tc.ops:
					t.Errorf("%d of %d inserts answered 201", created, tc.ops)
				case !tc.wantCreated && (noContent != tc.ops || declined != tc.ops || created != 0):
					t.Errorf("201: %d, 204: %d, declined: %d of %d inserts", created, noContent, declined, tc.ops)
				}
				if got := bytes.Count(resp.Body, []byte("\r\nETag: ")); got != tc.ops {
					t.Errorf("%d ETags for %d inserts", got, tc.ops)
				}
				// Applied either way.
				pager := s.Client().NewClient(table).NewListEntitiesPager(nil)
				count := 0
				for pager.More() {
					page, err := pager.NextPage(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					count += len(page.Entities)
				}
				if count != tc.ops {
					t.Errorf("%d of %d entities stored", count, tc.ops)
				}
			})
		}
	})
}
