package testserver

import (
	"fmt"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// suiteService covers the XML operations the SDK exposes: the table ACL
// ("Get Table ACL", "Set Table ACL") and the service properties ("Get/Set
// Table Service Properties").
func suiteService(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.ServiceClient(t)

	t.Run("TableACLRoundTrip", func(t *testing.T) {
		c := newTable(t, sc, "")
		start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		acl := []*aztables.SignedIdentifier{
			{ID: to.Ptr("readonly"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: to.Ptr(start.Add(24 * time.Hour)), Permission: to.Ptr("r")}},
			{ID: to.Ptr("everything"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: to.Ptr(start.Add(48 * time.Hour)), Permission: to.Ptr("raud")}},
		}
		if _, err := c.SetAccessPolicy(ctxFor(t), &aztables.SetAccessPolicyOptions{TableACL: acl}); err != nil {
			t.Fatalf("SetAccessPolicy: %v", err)
		}
		got, err := c.GetAccessPolicy(ctxFor(t), nil)
		if err != nil {
			t.Fatalf("GetAccessPolicy: %v", err)
		}
		if len(got.SignedIdentifiers) != len(acl) {
			t.Fatalf("got %d policies, want %d", len(got.SignedIdentifiers), len(acl))
		}
		for i, want := range acl {
			g := got.SignedIdentifiers[i]
			if g.ID == nil || *g.ID != *want.ID || g.AccessPolicy == nil ||
				g.AccessPolicy.Permission == nil || *g.AccessPolicy.Permission != *want.AccessPolicy.Permission ||
				g.AccessPolicy.Start == nil || !g.AccessPolicy.Start.Equal(*want.AccessPolicy.Start) ||
				g.AccessPolicy.Expiry == nil || !g.AccessPolicy.Expiry.Equal(*want.AccessPolicy.Expiry) {
				t.Errorf("policy %d: got %s, want %s", i, describeSI(g), describeSI(want))
			}
		}

		// Setting none clears the ACL.
		if _, err := c.SetAccessPolicy(ctxFor(t), &aztables.SetAccessPolicyOptions{}); err != nil {
			t.Fatalf("clear: %v", err)
		}
		if got, err := c.GetAccessPolicy(ctxFor(t), nil); err != nil || len(got.SignedIdentifiers) != 0 {
			t.Errorf("after clearing: %d policies, err %v", len(got.SignedIdentifiers), err)
		}
	})

	t.Run("TableACLErrors", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		// "Set Table ACL": at most five stored access policies. The SDK
		// refuses six itself, so this is a raw request.
		xml := `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>`
		for i := range 6 {
			xml += fmt.Sprintf(`<SignedIdentifier><Id>id%d</Id><AccessPolicy><Start>2024-01-01T00:00:00Z</Start>`+
				`<Expiry>2030-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>`, i)
		}
		xml += `</SignedIdentifiers>`
		resp := srv.Do(t, Request{Method: http.MethodPut, Path: "/" + table, RawQuery: "comp=acl", Body: []byte(xml),
			Header: http.Header{"Content-Type": {"application/xml"}, "Accept": {"application/xml"}}})
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("six policies: got %d %s, want 400", resp.StatusCode, truncate(resp.Body))
		}
		commonHeaders(t, resp)
		if got, err := c.GetAccessPolicy(ctxFor(t), nil); err != nil || len(got.SignedIdentifiers) != 0 {
			t.Errorf("after the refused set: %d policies, err %v", len(got.SignedIdentifiers), err)
		}
		one := []*aztables.SignedIdentifier{{ID: to.Ptr("id"),
			AccessPolicy: &aztables.AccessPolicy{Expiry: to.Ptr(time.Now().Add(time.Hour).UTC().Truncate(time.Second)), Permission: to.Ptr("r")}}}

		missing := sc.NewClient(TableName(t, "missing"))
		_, err := missing.GetAccessPolicy(ctxFor(t), nil)
		wantError(t, err, http.StatusNotFound, "TableNotFound")
		_, err = missing.SetAccessPolicy(ctxFor(t), &aztables.SetAccessPolicyOptions{TableACL: one})
		wantError(t, err, http.StatusNotFound, "TableNotFound")
	})

	t.Run("ServicePropertiesRoundTrip", func(t *testing.T) {
		if _, err := sc.GetProperties(ctxFor(t), nil); err != nil {
			t.Fatalf("GetProperties before any set: %v", err)
		}
		retention := &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(7))}
		want := aztables.ServiceProperties{
			Logging:     &aztables.Logging{Version: to.Ptr("1.0"), Delete: to.Ptr(true), Read: to.Ptr(false), Write: to.Ptr(true), RetentionPolicy: retention},
			HourMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true), RetentionPolicy: retention},
			MinuteMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(false),
				RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(false)}},
			Cors: []*aztables.CorsRule{{
				AllowedOrigins: to.Ptr("https://example.com"), AllowedMethods: to.Ptr("GET,PUT"),
				AllowedHeaders: to.Ptr("x-ms-meta-*"), ExposedHeaders: to.Ptr("x-ms-request-id"), MaxAgeInSeconds: to.Ptr(int32(60)),
			}},
		}
		if _, err := sc.SetProperties(ctxFor(t), want, nil); err != nil {
			t.Fatalf("SetProperties: %v", err)
		}
		got, err := sc.GetProperties(ctxFor(t), nil)
		if err != nil {
			t.Fatalf("GetProperties: %v", err)
		}
		if !reflect.DeepEqual(got.Logging, want.Logging) || !reflect.DeepEqual(got.HourMetrics, want.HourMetrics) ||
			!reflect.DeepEqual(got.Cors, want.Cors) || got.MinuteMetrics == nil || !reflect.DeepEqual(got.MinuteMetrics.Enabled, want.MinuteMetrics.Enabled) {
			t.Errorf("GetProperties returned %s, want %s", toString(got.ServiceProperties), toString(want))
		}
	})
}

func describeSI(si *aztables.SignedIdentifier) string { return toString(si) }
