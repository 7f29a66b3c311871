package protocoltest

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
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
	sc := srv.Client()

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
		wantACL(t, c, acl)

		// Setting none clears the ACL.
		if _, err := c.SetAccessPolicy(ctxFor(t), &aztables.SetAccessPolicyOptions{}); err != nil {
			t.Fatalf("clear: %v", err)
		}
		wantACL(t, c, nil)
	})

	t.Run("TableACLErrors", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		// "Set Table ACL": at most five stored access policies. The SDK
		// refuses six itself, so this is a raw request.
		resp := srv.Do(t, Request{Method: http.MethodPut, Path: "/" + table, RawQuery: "comp=acl", Body: sixPoliciesXML(),
			Header: http.Header{"Content-Type": {"application/xml"}, "Accept": {"application/xml"}}})
		wantXMLError(t, resp, http.StatusBadRequest, "InvalidXmlDocument")
		commonHeaders(t, resp)
		wantACL(t, c, nil)
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
		wantServiceProperties(t, sc, want)
	})
}

// wantACL reads the table's stored access policies and compares them with
// want, in order: the ID, the permission and both times.
func wantACL(t *testing.T, c *aztables.Client, want []*aztables.SignedIdentifier) {
	t.Helper()
	got, err := c.GetAccessPolicy(ctxFor(t), nil)
	if err != nil {
		t.Fatalf("GetAccessPolicy: %v", err)
	}
	if len(got.SignedIdentifiers) != len(want) {
		t.Fatalf("got %d policies, want %d", len(got.SignedIdentifiers), len(want))
	}
	for i, w := range want {
		g := got.SignedIdentifiers[i]
		if g.ID == nil || *g.ID != *w.ID || g.AccessPolicy == nil || g.AccessPolicy.Permission == nil ||
			*g.AccessPolicy.Permission != *w.AccessPolicy.Permission ||
			g.AccessPolicy.Start == nil || !g.AccessPolicy.Start.Equal(*w.AccessPolicy.Start) ||
			g.AccessPolicy.Expiry == nil || !g.AccessPolicy.Expiry.Equal(*w.AccessPolicy.Expiry) {
			t.Errorf("policy %d: got %s, want %s", i, toString(g), toString(w))
		}
	}
}

// sixPoliciesXML is a "Set Table ACL" body with one stored access policy
// more than the five Azure allows. The SDK refuses to send six itself.
func sixPoliciesXML() []byte {
	var body strings.Builder
	body.WriteString(`<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>`)
	for i := range 6 {
		fmt.Fprintf(&body, `<SignedIdentifier><Id>raw%d</Id><AccessPolicy><Start>2025-03-01T00:00:00.0000000Z</Start>`+
			`<Expiry>2025-03-02T00:00:00.0000000Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>`, i)
	}
	body.WriteString(`</SignedIdentifiers>`)
	return []byte(body.String())
}

// wantServiceProperties reads the service properties and compares each
// section with want.
func wantServiceProperties(t *testing.T, sc *aztables.ServiceClient, want aztables.ServiceProperties) {
	t.Helper()
	got, err := sc.GetProperties(ctxFor(t), nil)
	if err != nil {
		t.Fatalf("GetProperties: %v", err)
	}
	for _, section := range []struct {
		name      string
		got, want any
	}{
		{"Logging", got.Logging, want.Logging},
		{"HourMetrics", got.HourMetrics, want.HourMetrics},
		{"MinuteMetrics", got.MinuteMetrics, want.MinuteMetrics},
		{"Cors", got.Cors, want.Cors},
	} {
		if !reflect.DeepEqual(section.got, section.want) {
			t.Errorf("%s: got %s, want %s", section.name, toString(section.got), toString(section.want))
		}
	}
}
