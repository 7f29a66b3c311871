package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

// TestRequestRefusals covers the refusals the HTTP layer decides itself:
// verbs, the URL grammar, tokens and sizes, each with Azure's status and
// code, and nothing stored afterwards.
func TestRequestRefusals(t *testing.T) {
	t.Parallel()
	srv := protocoltest.New(t)
	if _, err := srv.Client().CreateTable(context.Background(), "refusals", nil); err != nil {
		t.Fatal(err)
	}
	entityPath := "/refusals(PartitionKey='p',RowKey='r')"
	for _, tc := range []struct {
		name   string
		req    protocoltest.Request
		status int
		code   string
	}{
		{"TwoXHTTPMethods", protocoltest.Request{Method: http.MethodPost, Path: entityPath, Body: []byte(`{}`),
			Header: http.Header{"X-Http-Method": {"MERGE", "DELETE"}, "Content-Type": {"application/json"}}},
			http.StatusBadRequest, "XMethodIncorrectCount"},
		{"VerbTheResourceLacks", protocoltest.Request{Method: http.MethodPut, Path: "/Tables"},
			http.StatusMethodNotAllowed, "UnsupportedHttpVerb"},
		{"UnknownComp", protocoltest.Request{Method: http.MethodGet, Path: "/", RawQuery: "restype=service&comp=logging"},
			http.StatusBadRequest, "InvalidQueryParameterValue"},
		{"ServiceRootWithoutRestype", protocoltest.Request{Method: http.MethodGet, Path: "/"},
			http.StatusBadRequest, "InvalidUri"},
		{"NestedPath", protocoltest.Request{Method: http.MethodGet, Path: "/refusals/extra"},
			http.StatusBadRequest, "InvalidUri"},
		{"ForeignContinuationToken", protocoltest.Request{Method: http.MethodGet, Path: "/refusals()", RawQuery: "NextPartitionKey=abc"},
			http.StatusBadRequest, "InvalidInput"},
		{"ForeignTableToken", protocoltest.Request{Method: http.MethodGet, Path: "/Tables", RawQuery: "NextTableName=1!9!abc"},
			http.StatusBadRequest, "InvalidInput"},
		{"TopNegative", protocoltest.Request{Method: http.MethodGet, Path: "/refusals()", RawQuery: "$top=-1"},
			http.StatusBadRequest, "InvalidInput"},
		{"TopOver1000", protocoltest.Request{Method: http.MethodGet, Path: "/refusals()", RawQuery: "$top=1001"},
			http.StatusBadRequest, "InvalidInput"},
		{"EntityBodyOver4MiB", protocoltest.Request{Method: http.MethodPost, Path: "/refusals",
			Body:   append(append([]byte(`{"PartitionKey":"p","RowKey":"r","S":"`), bytes.Repeat([]byte("x"), 4<<20)...), `"}`...),
			Header: http.Header{"Content-Type": {"application/json"}}},
			http.StatusRequestEntityTooLarge, "RequestBodyTooLarge"},
		{"UnknownAccount", protocoltest.Request{Method: http.MethodGet, Path: "/Tables", Account: "nosuchaccount", Signing: protocoltest.Unsigned},
			http.StatusBadRequest, "InvalidUri"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := srv.Do(t, tc.req)
			if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code {
				t.Fatalf("%d %s, want %d %s: %.300s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.status, tc.code, resp.Body)
			}
			if resp.Header.Get("x-ms-request-id") == "" {
				t.Error("no x-ms-request-id")
			}
		})
	}
	resp := srv.Do(t, protocoltest.Request{Method: http.MethodGet, Path: "/refusals()"})
	if resp.StatusCode != http.StatusOK || bytes.Contains(resp.Body, []byte(`"RowKey"`)) {
		t.Fatalf("after the refusals the table holds: %d %s", resp.StatusCode, resp.Body)
	}
}
