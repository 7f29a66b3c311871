package functions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// runScenario drives the official Go SDK (aztables) through the gateway:
// create a table, insert, query with continuation and with a filter full of
// characters that need encoding, merge (PATCH and the X-HTTP-Method
// tunnel), a batch, conditional updates and deletes, typed entities, odd
// keys, a batch of 100, the ACL, service properties and CORS preflight
// (runScenarioMore), then delete the table.
// Every call asserts its response. The SDK signs with SharedKeyLite over
// the path it sends (stage or base path included) and sends x-ms-date with its comma, ETags in
// If-Match and Prefer, so each success also proves those arrive intact.
func runScenario(t *testing.T, g *gateway, table string) {
	dev := auth.DevStoreAccount()
	connStr := fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
		dev.Name, auth.DevStoreAccountKey, g.accountURL(dev.Name))
	svc := protocoltest.NewServiceClient(t, connStr)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, f) {
			t.FailNow()
		}
	}
	client := svc.NewClient(table)

	step("create table", func(t *testing.T) {
		if _, err := svc.CreateTable(ctx, table, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CreateTable(ctx, table, nil); azCode(err) != "TableAlreadyExists" {
			t.Fatalf("second create: %v, want TableAlreadyExists", err)
		}
		pager := svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + table + "'")})
		page, err := pager.NextPage(ctx)
		if err != nil || len(page.Tables) != 1 || *page.Tables[0].Name != table {
			t.Fatalf("list tables: %v %+v", err, page.Tables)
		}
	})

	const tricky = "O'Brien, Jr. & Co = 100%+ Zürich 東京 🦀"
	step("insert", func(t *testing.T) {
		for i := range 9 {
			e := map[string]any{"PartitionKey": "p1", "RowKey": fmt.Sprintf("r%02d", i), "N": i, "Name": fmt.Sprintf("row %d, plain", i)}
			if i == 7 {
				e["Name"] = tricky
			}
			resp, err := client.AddEntity(ctx, mustJSON(t, e), nil)
			if err != nil {
				t.Fatalf("add %d: %v", i, err)
			}
			if resp.ETag == "" {
				t.Fatalf("add %d: no ETag", i)
			}
		}
		if _, err := client.AddEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": "p2", "RowKey": "x", "N": 100}), nil); err != nil {
			t.Fatal(err)
		}
		_, err := client.AddEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "r00"}), nil)
		if azCode(err) != "EntityAlreadyExists" {
			t.Fatalf("duplicate insert: %v", err)
		}
	})

	step("query with continuation", func(t *testing.T) {
		pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p1'"), Top: to.Ptr[int32](4)})
		var rows []string
		pages := 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(page.Entities) > 4 {
				t.Fatalf("page of %d entities with $top=4", len(page.Entities))
			}
			for _, b := range page.Entities {
				rows = append(rows, field(t, b, "RowKey"))
			}
		}
		want := []string{"r00", "r01", "r02", "r03", "r04", "r05", "r06", "r07", "r08"}
		if !slices.Equal(rows, want) || pages < 3 {
			t.Fatalf("%d pages, rows %v, want %v over at least 3 pages", pages, rows, want)
		}
	})

	step("query with a filter that needs encoding", func(t *testing.T) {
		filter := "Name eq '" + strings.ReplaceAll(tricky, "'", "''") + "' and N ge 7"
		pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter})
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entities) != 1 || field(t, page.Entities[0], "RowKey") != "r07" {
			t.Fatalf("filter %q matched %d entities", filter, len(page.Entities))
		}
	})

	step("merge with If-Match", func(t *testing.T) {
		got, err := client.GetEntity(ctx, "p1", "r01", nil)
		if err != nil {
			t.Fatal(err)
		}
		upd, err := client.UpdateEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "r01", "Extra": "added, with a comma"}),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &got.ETag})
		if err != nil {
			t.Fatal(err)
		}
		if upd.ETag == got.ETag {
			t.Fatal("merge kept the ETag")
		}
		after, err := client.GetEntity(ctx, "p1", "r01", nil)
		if err != nil {
			t.Fatal(err)
		}
		if field(t, after.Value, "Extra") != "added, with a comma" || field(t, after.Value, "Name") != "row 1, plain" {
			t.Fatalf("merged entity %s", after.Value)
		}
		// The old ETag is stale now.
		_, err = client.UpdateEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "r01", "Late": true}),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &got.ETag})
		if azCode(err) != "UpdateConditionNotSatisfied" {
			t.Fatalf("merge with a stale ETag: %v", err)
		}
	})

	step("merge tunnelled through POST with X-HTTP-Method", func(t *testing.T) {
		resp := rawRequest(t, g, rawReq{method: http.MethodPost, path: "/" + table + "(PartitionKey='p1',RowKey='r02')",
			body: `{"Tunnelled":"yes"}`, header: map[string]string{"X-HTTP-Method": "MERGE", "If-Match": "*", "Content-Type": "application/json"}})
		if resp.status != http.StatusNoContent {
			t.Fatalf("tunnelled merge: %d %s", resp.status, resp.body)
		}
		got, err := client.GetEntity(ctx, "p1", "r02", nil)
		if err != nil || field(t, got.Value, "Tunnelled") != "yes" || field(t, got.Value, "Name") != "row 2, plain" {
			t.Fatalf("after tunnelled merge: %v %s", err, got.Value)
		}
	})

	step("batch", func(t *testing.T) {
		r03, err := client.GetEntity(ctx, "p1", "r03", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.SubmitTransaction(ctx, []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "b1", "N": 1})},
			{ActionType: aztables.TransactionTypeUpdateMerge, Entity: mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "r03", "Batched": true}), IfMatch: &r03.ETag},
			{ActionType: aztables.TransactionTypeInsertReplace, Entity: mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "r04", "Replaced": true})},
			{ActionType: aztables.TransactionTypeDelete, Entity: mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "r05"})},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.GetEntity(ctx, "p1", "r05", nil); azCode(err) != "ResourceNotFound" {
			t.Fatalf("r05 after batch delete: %v", err)
		}
		r04, err := client.GetEntity(ctx, "p1", "r04", nil)
		if err != nil || field(t, r04.Value, "Name") != "" {
			t.Fatalf("r04 after batch replace: %v %s", err, r04.Value)
		}
		// A failing batch changes nothing: b1 exists now.
		_, err = client.SubmitTransaction(ctx, []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "b2"})},
			{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "b1"})},
		}, nil)
		// Azure answers a failed changeset with 202 and the failing
		// operation's error inside; the SDK reports the 202 as an error.
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusAccepted ||
			!strings.Contains(err.Error(), `"code":"EntityAlreadyExists"`) || !strings.Contains(err.Error(), `"1:The specified entity already exists.`) {
			t.Fatalf("failing batch: %v", err)
		}
		if _, err := client.GetEntity(ctx, "p1", "b2", nil); azCode(err) != "ResourceNotFound" {
			t.Fatalf("b2 after a failed batch: %v", err)
		}
	})

	// An entity over DynamoDB's 400 KB item size is split over items and
	// written, merged, replaced and deleted in transactions, after reading
	// the stored version: the store's slow paths, and the IAM actions they
	// need.
	step("entity larger than a DynamoDB item", func(t *testing.T) {
		big := map[string]any{"PartitionKey": "p3", "RowKey": "big"}
		for i := range 14 {
			big[fmt.Sprintf("S%02d", i)] = strings.Repeat(string(rune('a'+i)), 30000)
		}
		added, err := client.AddEntity(ctx, mustJSON(t, big), nil)
		if err != nil {
			t.Fatal(err)
		}
		merged, err := client.UpdateEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": "p3", "RowKey": "big", "Small": "yes"}),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &added.ETag})
		if err != nil {
			t.Fatal(err)
		}
		got, err := client.GetEntity(ctx, "p3", "big", nil)
		if err != nil || field(t, got.Value, "Small") != "yes" || len(field(t, got.Value, "S13")) != 30000 {
			t.Fatalf("merged large entity: %v (%d bytes)", err, len(got.Value))
		}
		big["S00"] = "replaced"
		if _, err := client.UpdateEntity(ctx, mustJSON(t, big),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace, IfMatch: &merged.ETag}); err != nil {
			t.Fatal(err)
		}
		got, err = client.GetEntity(ctx, "p3", "big", nil)
		if err != nil || field(t, got.Value, "S00") != "replaced" || field(t, got.Value, "Small") != "" {
			t.Fatalf("replaced large entity: %v", err)
		}
		// A batch whose second op, a merge too large for one item, fails
		// on the stored entity (none): the store checks that in the
		// transaction (a ConditionCheck), so that an earlier op's
		// failure would be named first, and the batch names op 1.
		absent := map[string]any{"PartitionKey": "p3", "RowKey": "absent"}
		for i := range 14 {
			absent[fmt.Sprintf("S%02d", i)] = strings.Repeat("x", 30000)
		}
		anyETag := azcore.ETagAny
		_, err = client.SubmitTransaction(ctx, []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p3", "RowKey": "beside"})},
			{ActionType: aztables.TransactionTypeUpdateMerge, Entity: mustJSON(t, absent), IfMatch: &anyETag},
		}, nil)
		var re *azcore.ResponseError
		if !errors.As(err, &re) || re.StatusCode != http.StatusAccepted ||
			!strings.Contains(err.Error(), `"code":"ResourceNotFound"`) || !strings.Contains(err.Error(), `"1:`) {
			t.Fatalf("batch with a large merge of a missing entity: %v", err)
		}
		if _, err := client.GetEntity(ctx, "p3", "beside", nil); azCode(err) != "ResourceNotFound" {
			t.Fatalf("the failed batch's insert: %v", err)
		}
		if _, err := client.DeleteEntity(ctx, "p3", "big", &aztables.DeleteEntityOptions{IfMatch: &got.ETag}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.GetEntity(ctx, "p3", "big", nil); azCode(err) != "ResourceNotFound" {
			t.Fatalf("large entity after delete: %v", err)
		}
	})

	step("delete entity", func(t *testing.T) {
		got, err := client.GetEntity(ctx, "p1", "r06", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.DeleteEntity(ctx, "p1", "r06", &aztables.DeleteEntityOptions{IfMatch: &got.ETag}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.DeleteEntity(ctx, "p1", "r06", nil); azCode(err) != "ResourceNotFound" {
			t.Fatalf("second delete: %v", err)
		}
	})

	runScenarioMore(ctx, g, svc, client, table, step)

	step("signature over the path sent", func(t *testing.T) {
		if resp := rawRequest(t, g, rawReq{method: http.MethodGet, path: "/Tables"}); resp.status != http.StatusOK {
			t.Fatalf("signed over %s/...: %d %s", g.prefix(), resp.status, resp.body)
		}
		if g.prefix() == "" {
			return
		}
		resp := rawRequest(t, g, rawReq{method: http.MethodGet, path: "/Tables", signWithoutStage: true})
		if resp.status != http.StatusForbidden || resp.code != "AuthenticationFailed" {
			t.Fatalf("signed without %s: %d %s", g.prefix(), resp.status, resp.body)
		}
	})

	step("delete table", func(t *testing.T) {
		if _, err := svc.DeleteTable(ctx, table, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := client.GetEntity(ctx, "p1", "r00", nil); azCode(err) != "TableNotFound" {
			t.Fatalf("read after delete table: %v", err)
		}
	})
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func field(t testing.TB, entity []byte, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(entity, &m); err != nil {
		t.Fatalf("entity %s: %v", entity, err)
	}
	switch v := m[name].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}

func azCode(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	if err != nil {
		return "not a response error: " + err.Error()
	}
	return ""
}

type rawReq struct {
	method, path, body string
	query              url.Values
	header             map[string]string
	// signWithoutStage signs the path without the stage or base path;
	// unsigned sends no Authorization (a CORS preflight).
	signWithoutStage, unsigned bool
}

type rawResp struct {
	status int
	code   string
	header http.Header
	body   string
}

// rawRequest sends a request the SDK cannot express, signed with
// SharedKeyLite like the SDKs, through the gateway.
func rawRequest(t testing.TB, g *gateway, r rawReq) rawResp {
	t.Helper()
	dev := auth.DevStoreAccount()
	u, err := url.Parse(g.accountURL(dev.Name) + r.path)
	if err != nil {
		t.Fatal(err)
	}
	u.RawQuery = r.query.Encode()
	req, err := http.NewRequest(r.method, u.String(), strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("x-ms-version", "2019-02-02")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	signed := req
	if r.signWithoutStage {
		signed = req.Clone(context.Background())
		su := *req.URL
		su.Path, su.RawPath = strings.TrimPrefix(su.Path, g.prefix()), ""
		signed.URL = &su
	}
	if !r.unsigned {
		if err := auth.SignSharedKeyLite(signed, dev.Name, dev.Keys[0]); err != nil {
			t.Fatal(err)
		}
		req.Header.Set("x-ms-date", signed.Header.Get("x-ms-date"))
		req.Header.Set("Authorization", signed.Header.Get("Authorization"))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResp{status: resp.StatusCode, code: resp.Header.Get("x-ms-error-code"), header: resp.Header, body: string(b)}
}
