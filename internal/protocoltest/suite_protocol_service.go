package protocoltest

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// suiteServiceSettings covers the table ACL at its limit of five stored
// access policies ("Set Table ACL"), the service properties document in
// full ("Set Table Service Properties", "Get Table Service Properties")
// and "Get Table Service Stats".
func suiteServiceSettings(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()

	t.Run("ACLOfFivePolicies", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		start := time.Date(2025, 3, 1, 8, 30, 0, 0, time.UTC)
		perms := []string{"r", "a", "u", "d", "raud"}
		acl := make([]*aztables.SignedIdentifier, len(perms))
		for i, p := range perms {
			acl[i] = &aztables.SignedIdentifier{ID: to.Ptr(fmt.Sprintf("policy%d", i)), AccessPolicy: &aztables.AccessPolicy{
				Start: to.Ptr(start.Add(time.Duration(i) * time.Hour)), Expiry: to.Ptr(start.Add(time.Duration(i+24) * time.Hour)), Permission: to.Ptr(p)}}
		}
		if _, err := c.SetAccessPolicy(ctxFor(t), &aztables.SetAccessPolicyOptions{TableACL: acl}); err != nil {
			t.Fatalf("SetAccessPolicy with 5 policies: %v", err)
		}
		wantACL(t, c, acl)

		// A sixth policy is refused and the five stay. aztables sends the
		// six and, on the 400, replaces the service's error with its own.
		six := append(append([]*aztables.SignedIdentifier{}, acl...), &aztables.SignedIdentifier{ID: to.Ptr("policy5"),
			AccessPolicy: &aztables.AccessPolicy{Expiry: to.Ptr(start.Add(48 * time.Hour)), Permission: to.Ptr("r")}})
		if _, err := c.SetAccessPolicy(ctxFor(t), &aztables.SetAccessPolicyOptions{TableACL: six}); err == nil {
			t.Error("SetAccessPolicy with 6 policies succeeded")
		}
		resp := srv.Do(t, Request{Method: http.MethodPut, Path: "/" + table, RawQuery: "comp=acl", Body: sixPoliciesXML(),
			Header: http.Header{"Content-Type": {"application/xml"}}})
		wantXMLError(t, resp, http.StatusBadRequest, "InvalidXmlDocument")
		commonHeaders(t, resp)
		wantACL(t, c, acl)
	})

	t.Run("PropertiesRoundTrip", func(t *testing.T) {
		want := aztables.ServiceProperties{
			Logging: &aztables.Logging{Version: to.Ptr("1.0"), Delete: to.Ptr(true), Read: to.Ptr(true), Write: to.Ptr(false),
				RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(30))}},
			HourMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(false),
				RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(365))}},
			MinuteMetrics: &aztables.Metrics{Version: to.Ptr("1.0"), Enabled: to.Ptr(true), IncludeAPIs: to.Ptr(true),
				RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(true), Days: to.Ptr(int32(1))}},
			Cors: []*aztables.CorsRule{
				{AllowedOrigins: to.Ptr("https://app.example.com,https://admin.example.com"), AllowedMethods: to.Ptr("GET,POST,PUT,PATCH,MERGE,DELETE"),
					AllowedHeaders: to.Ptr("x-ms-meta-*,x-ms-version,content-type"), ExposedHeaders: to.Ptr("x-ms-request-id,etag"), MaxAgeInSeconds: to.Ptr(int32(3600))},
				{AllowedOrigins: to.Ptr("*"), AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr("*"), ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr(int32(0))},
			},
		}
		if _, err := sc.SetProperties(ctxFor(t), want, nil); err != nil {
			t.Fatalf("SetProperties: %v", err)
		}
		wantServiceProperties(t, sc, want)

		// "If an element is not specified ... the existing setting is
		// kept": a document with only Cors changes only the rules.
		onlyCors := aztables.ServiceProperties{Cors: []*aztables.CorsRule{{AllowedOrigins: to.Ptr("https://only.example"),
			AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr(""), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr(int32(5))}}}
		if _, err := sc.SetProperties(ctxFor(t), onlyCors, nil); err != nil {
			t.Fatalf("SetProperties with only Cors: %v", err)
		}
		merged := want
		merged.Cors = onlyCors.Cors
		wantServiceProperties(t, sc, merged)

		// Invalid documents are refused whole: six CORS rules ("up to five
		// CORS rules"), or a method CORS does not know.
		six := aztables.ServiceProperties{Logging: &aztables.Logging{Version: to.Ptr("1.0"), Delete: to.Ptr(false), Read: to.Ptr(false), Write: to.Ptr(false),
			RetentionPolicy: &aztables.RetentionPolicy{Enabled: to.Ptr(false)}}}
		for i := range 6 {
			six.Cors = append(six.Cors, &aztables.CorsRule{AllowedOrigins: to.Ptr(fmt.Sprintf("https://o%d.example", i)),
				AllowedMethods: to.Ptr("GET"), AllowedHeaders: to.Ptr(""), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr(int32(1))})
		}
		badMethod := aztables.ServiceProperties{Cors: []*aztables.CorsRule{{AllowedOrigins: to.Ptr("https://x.example"),
			AllowedMethods: to.Ptr("TRACE"), AllowedHeaders: to.Ptr(""), ExposedHeaders: to.Ptr(""), MaxAgeInSeconds: to.Ptr(int32(1))}}}
		for _, tc := range []struct {
			name string
			doc  aztables.ServiceProperties
		}{{"SixRules", six}, {"UnknownMethod", badMethod}} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := sc.SetProperties(ctxFor(t), tc.doc, nil)
				wantError(t, err, http.StatusBadRequest, "InvalidXmlDocument")
			})
		}
		wantServiceProperties(t, sc, merged)
	})
}
