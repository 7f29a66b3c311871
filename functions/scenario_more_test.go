package functions_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// runScenarioMore is the second half of the SDK scenario: typed entities,
// odd keys, a batch of 100, the table ACL, service properties and CORS
// preflight. A literal MERGE verb is not among them: only this harness is
// known to deliver it (AWS documents nothing about extension methods), so
// lambdafn's TestLiteralMerge checks it against the handler alone, and the
// front doors are driven with PATCH and the X-HTTP-Method tunnel.
func runScenarioMore(ctx context.Context, g *gateway, svc *aztables.ServiceClient, client *aztables.Client, table string,
	step func(string, func(*testing.T))) {
	step("typed entities", func(t *testing.T) {
		when := time.Date(2026, 11, 25, 1, 2, 3, 456789100, time.UTC)
		e := aztables.EDMEntity{
			Entity: aztables.Entity{PartitionKey: "typed", RowKey: "all"},
			Properties: map[string]any{
				"I64": aztables.EDMInt64(-9007199254740993), "I32": int32(-7), "D": 1.5, "B": true, "S": "text, with comma",
				"T": aztables.EDMDateTime(when), "G": aztables.EDMGUID("c9da6455-213d-42c9-9a79-3e9149a57833"),
				"Bin": aztables.EDMBinary([]byte{0, 1, 2, 0xff}),
			},
		}
		if _, err := client.AddEntity(ctx, mustJSON(t, e), nil); err != nil {
			t.Fatal(err)
		}
		got, err := client.GetEntity(ctx, "typed", "all", nil)
		if err != nil {
			t.Fatal(err)
		}
		var back aztables.EDMEntity
		if err := back.UnmarshalJSON(got.Value); err != nil {
			t.Fatal(err)
		}
		p := back.Properties
		if p["I64"] != aztables.EDMInt64(-9007199254740993) || p["S"] != "text, with comma" || p["B"] != true ||
			p["G"] != aztables.EDMGUID("c9da6455-213d-42c9-9a79-3e9149a57833") || string(p["Bin"].(aztables.EDMBinary)) != "\x00\x01\x02\xff" ||
			!time.Time(p["T"].(aztables.EDMDateTime)).Equal(when) {
			t.Fatalf("typed entity came back as %s", got.Value)
		}
	})

	const oddPK, oddRK = "O'Brien, 100% Zürich", "東京 (x)=y+1 & more"
	step("odd keys", func(t *testing.T) {
		added, err := client.AddEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": oddPK, "RowKey": oddRK, "V": 1}), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.UpdateEntity(ctx, mustJSON(t, map[string]any{"PartitionKey": oddPK, "RowKey": oddRK, "W": 2}),
			&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &added.ETag}); err != nil {
			t.Fatal(err)
		}
		got, err := client.GetEntity(ctx, oddPK, oddRK, nil)
		if err != nil || field(t, got.Value, "V") != "1" || field(t, got.Value, "W") != "2" {
			t.Fatalf("odd keys: %v %s", err, got.Value)
		}
		if _, err := client.DeleteEntity(ctx, oddPK, oddRK, &aztables.DeleteEntityOptions{IfMatch: &got.ETag}); err != nil {
			t.Fatal(err)
		}
	})

	step("batch of 100", func(t *testing.T) {
		var actions []aztables.TransactionAction
		for i := range 100 {
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
				Entity: mustJSON(t, map[string]any{"PartitionKey": "hundred", "RowKey": fmt.Sprintf("%03d", i), "N": i})})
		}
		if _, err := client.SubmitTransaction(ctx, actions, nil); err != nil {
			t.Fatal(err)
		}
		pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'hundred'"), Top: to.Ptr[int32](40)})
		n, pages := 0, 0
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			n, pages = n+len(page.Entities), pages+1
		}
		if n != 100 || pages != 3 {
			t.Fatalf("%d entities over %d pages, want 100 over 3", n, pages)
		}
	})

	step("table ACL", func(t *testing.T) {
		start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		ids := []*aztables.SignedIdentifier{{ID: to.Ptr("readers"), AccessPolicy: &aztables.AccessPolicy{
			Start: &start, Expiry: to.Ptr(start.AddDate(2, 0, 0)), Permission: to.Ptr("r")}}}
		if _, err := client.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: ids}); err != nil {
			t.Fatal(err)
		}
		got, err := client.GetAccessPolicy(ctx, nil)
		if err != nil || len(got.SignedIdentifiers) != 1 || *got.SignedIdentifiers[0].ID != "readers" {
			t.Fatalf("ACL: %v %+v", err, got.SignedIdentifiers)
		}
	})

	step("service properties", func(t *testing.T) {
		props, err := svc.GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		props.Cors = []*aztables.CorsRule{{AllowedOrigins: to.Ptr("https://app.example.com"), AllowedMethods: to.Ptr("GET,PUT,MERGE"),
			AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr("x-ms-*"), MaxAgeInSeconds: to.Ptr[int32](60)}}
		if _, err := svc.SetProperties(ctx, props.ServiceProperties, nil); err != nil {
			t.Fatal(err)
		}
		again, err := svc.GetProperties(ctx, nil)
		if err != nil || len(again.Cors) != 1 || *again.Cors[0].AllowedOrigins != "https://app.example.com" {
			t.Fatalf("service properties: %v %+v", err, again.Cors)
		}
	})

	step("preflight", func(t *testing.T) {
		resp := rawRequest(t, g, rawReq{method: http.MethodOptions, path: "/" + table + "()", unsigned: true,
			header: map[string]string{"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT"}})
		if resp.status != http.StatusOK || resp.header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
			t.Fatalf("preflight: %d %v %s", resp.status, resp.header, resp.body)
		}
		resp = rawRequest(t, g, rawReq{method: http.MethodOptions, path: "/Tables", unsigned: true,
			header: map[string]string{"Origin": "https://evil.example.com", "Access-Control-Request-Method": "PUT"}})
		if resp.status != http.StatusForbidden {
			t.Fatalf("preflight from another origin: %d %s", resp.status, resp.body)
		}
	})
}
