package protocoltest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/oauth"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// basicChallenge is what a server that takes tokens in basic mode (any
// Microsoft Entra tenant) answers a request without credentials with: the
// multi-tenant authority and the storage resource.
const basicChallenge = "Bearer authorization_uri=https://login.microsoftonline.com/common/oauth2/authorize resource_id=https://storage.azure.com"

// noAuthMessage is the message of Azure's 401 NoAuthenticationInformation.
const noAuthMessage = "Server failed to authenticate the request. Please refer to the information in the www-authenticate header."

// suiteAnonymous covers requests that carry no credentials (neither an
// Authorization header nor a SAS), on every operation: where bearer tokens
// are accepted, Azure's 401 NoAuthenticationInformation with the challenge
// a client signs in from (the Java SDK's recording
// TableAsyncClientTest.createTableWithMultipleTenants, Azure/azure-sdk-for-java
// sdk/tables/azure-data-tables/src/test/resources/session-records; the .NET
// SDK's EnableTenantDiscoveryLiveTests(StorageAAD)/EnableTenantDiscoveryDoesNotFailAuth,
// Azure/azure-sdk-for-net sdk/tables/Azure.Data.Tables/tests/SessionRecords);
// where only keys and SAS are, 403 AuthenticationFailed without a
// challenge, Azure's answer where no token can sign a request in
// (test_challenge_auth.pyTestTableChallengeAuthtest_challenge_auth_unsupported_version,
// Azure/azure-sdk-for-python sdk/tables/azure-data-tables/tests/recordings).
// Nothing is stored either way, and CORS preflights are answered as before.
func suiteAnonymous(t *testing.T, newServer func(t *testing.T) *Server) {
	keysOnly := newServer(t)
	// Handlers that take bearer tokens, over the same store: over HTTPS,
	// and over plain HTTP, where Azure refuses tokens.
	tokens := New(t, tablebridgetest.WithStore(keysOnly.Store), tablebridgetest.WithBearerTokens(nil))
	basic, err := oauth.NewBasic(nil)
	if err != nil {
		t.Fatal(err)
	}
	tokensOverHTTP := New(t, tablebridgetest.WithStore(keysOnly.Store), tablebridgetest.WithTokenVerifier(basic))

	c := newTable(t, keysOnly.Client(), "anon")
	table := TableName(t, "anon")
	addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","V":1}`)
	before := snapshot(t, c)
	newName := TableName(t, "anonnew")
	entity := entityPath(table, "p", "r")
	body := []byte(`{"PartitionKey":"p","RowKey":"r","V":2}`)
	anyVersion := http.Header{"If-Match": {"*"}}
	xmlBody := []byte(`<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers></SignedIdentifiers>`)
	requests := []struct {
		name string
		r    Request
		xml  bool
	}{
		// The recorded request: Create Table asking for no content.
		{"CreateTable", Request{Method: http.MethodPost, Path: "/Tables", Body: []byte(`{"TableName":"` + newName + `"}`),
			Header: http.Header{"Prefer": {"return-no-content"}, "Content-Type": {"application/json;odata=nometadata"}, "x-ms-version": {"2020-12-06"}}}, false},
		{"QueryTables", Request{Method: http.MethodGet, Path: "/Tables"}, false},
		{"GetTable", Request{Method: http.MethodGet, Path: "/Tables('" + table + "')"}, false},
		{"DeleteTable", Request{Method: http.MethodDelete, Path: "/Tables('" + table + "')"}, false},
		{"InsertEntity", Request{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"new"}`),
			Header: http.Header{"Prefer": {"return-no-content"}}}, false},
		{"GetEntity", Request{Method: http.MethodGet, Path: entity}, false},
		{"QueryEntities", Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: "$format=application%2Fjson%3Bodata%3Dfullmetadata"}, false},
		{"UpdateEntity", Request{Method: http.MethodPut, Path: entity, Body: body, Header: anyVersion}, false},
		{"InsertOrReplace", Request{Method: http.MethodPut, Path: entity, Body: body}, false},
		{"MergeEntity", Request{Method: "MERGE", Path: entity, Body: body, Header: anyVersion}, false},
		{"PatchEntity", Request{Method: http.MethodPatch, Path: entity, Body: body}, false},
		{"DeleteEntity", Request{Method: http.MethodDelete, Path: entity, Header: anyVersion}, false},
		{"Batch", Request{Method: http.MethodPost, Path: "/$batch", Body: []byte("--b\r\n\r\n--b--\r\n"),
			Header: http.Header{"Content-Type": {"multipart/mixed; boundary=b"}}}, false},
		{"GetTableACL", Request{Method: http.MethodGet, Path: "/" + table, RawQuery: "comp=acl"}, true},
		{"SetTableACL", Request{Method: http.MethodPut, Path: "/" + table, RawQuery: "comp=acl", Body: xmlBody,
			Header: http.Header{"Content-Type": {"application/xml"}}}, true},
		{"GetServiceProperties", Request{Method: http.MethodGet, Path: "/", RawQuery: "restype=service&comp=properties"}, true},
		{"SetServiceProperties", Request{Method: http.MethodPut, Path: "/", RawQuery: "restype=service&comp=properties",
			Body:   []byte(`<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties></StorageServiceProperties>`),
			Header: http.Header{"Content-Type": {"application/xml"}}}, true},
		{"GetServiceStats", Request{Method: http.MethodGet, Path: "/", RawQuery: "restype=service&comp=stats", Secondary: true}, true},
	}
	for _, tc := range requests {
		tc.r.Signing = Unsigned
		wantError := wantRawError
		if tc.xml {
			wantError = wantXMLError
		}
		t.Run(tc.name, func(t *testing.T) {
			resp := tokens.Do(t, tc.r)
			wantError(t, resp, http.StatusUnauthorized, "NoAuthenticationInformation")
			commonHeaders(t, resp)
			if got := resp.Header.Get("WWW-Authenticate"); got != basicChallenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, basicChallenge)
			}
			if got, ok := resp.Header["Preference-Applied"]; ok {
				t.Errorf("Preference-Applied %q, want none", got)
			}
			wantType := "application/json"
			if tc.xml {
				wantType = "application/xml"
			}
			if got := resp.Header.Get("Content-Type"); got != wantType {
				t.Errorf("Content-Type %q, want %q", got, wantType)
			}
			message := noAuthMessage + "\nRequestId:" + resp.Header.Get("x-ms-request-id") + "\nTime:"
			if tc.xml {
				if !strings.Contains(string(resp.Body), "<Code>NoAuthenticationInformation</Code><Message>"+message) {
					t.Errorf("body %s", resp.Body)
				}
			} else {
				odataError, _ := decodeJSON(t, resp.Body)["odata.error"].(map[string]any)
				value, _ := odataError["message"].(map[string]any)["value"].(string)
				if odataError["code"] != "NoAuthenticationInformation" || !strings.HasPrefix(value, message) {
					t.Errorf("body %s", resp.Body)
				}
			}
			if tc.name == "CreateTable" && len(resp.Body) != 281 {
				// Azure's answer to that request is 281 bytes: the same
				// message, request id and time of the same shape.
				t.Errorf("body of %d bytes, Azure's is 281: %s", len(resp.Body), resp.Body)
			}

			for name, other := range map[string]*Server{"keys and SAS only": keysOnly, "tokens over plain HTTP": tokensOverHTTP} {
				resp := other.Do(t, tc.r)
				wantError(t, resp, http.StatusForbidden, "AuthenticationFailed")
				if got, ok := resp.Header["Www-Authenticate"]; ok {
					t.Errorf("%s: WWW-Authenticate %q, want none", name, got)
				}
			}
		})
	}
	unchanged(t, c, before)
	wantRawError(t, keysOnly.Do(t, Request{Method: http.MethodGet, Path: "/Tables('" + newName + "')"}), http.StatusNotFound, "ResourceNotFound")

	// A CORS preflight carries no credentials by design and is answered
	// from the CORS rules alone (none here).
	t.Run("PreflightUnchanged", func(t *testing.T) {
		pre := Request{Method: http.MethodOptions, Path: "/Tables", Signing: Unsigned,
			Header: http.Header{"Origin": {"https://app.example.com"}, "Access-Control-Request-Method": {"GET"}}}
		wantRawError(t, tokens.Do(t, pre), http.StatusForbidden, "CorsPreflightFailure")
		wantRawError(t, keysOnly.Do(t, pre), http.StatusForbidden, "CorsPreflightFailure")
	})
}
