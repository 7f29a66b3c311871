package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/httpapi"
)

// TestServeAnswersOversizeRequestsInAzureShape holds the bounds on the
// request URL and headers (SECURITY.md, "Limits and timeouts") over the
// real server: a $filter of 100,000 characters and a $select of 1,000 names
// (a 256 KB URL) get 414 InvalidUri, and 70 KiB of headers 400
// InvalidHeaderValue, each in Azure's error shape with x-ms-request-id;
// the longest legitimate address (two 1 KiB keys, percent-encoded) is not
// refused for its size. Only past httpapi.ServerMaxHeaderBytes does
// net/http answer on its own.
func TestServeAnswersOversizeRequestsInAzureShape(t *testing.T) {
	t.Parallel()
	s := startLimitedServe(t, serveLimits{})
	names := make([]string, 1000)
	for i := range names {
		names[i] = "P" + strings.Repeat("x", 250) + strings.Repeat("y", i%10)
	}
	for name, tc := range map[string]struct {
		path   string
		header http.Header
		status int
		code   string
	}{
		"$filter of 100,000 characters": {path: "/limits()?$filter=" + url.QueryEscape("PartitionKey eq '"+strings.Repeat("x", 100_000)+"'"),
			status: http.StatusRequestURITooLong, code: "InvalidUri"},
		"$select of 1,000 names": {path: "/limits()?$select=" + strings.Join(names, ","),
			status: http.StatusRequestURITooLong, code: "InvalidUri"},
		"70 KiB of headers": {path: "/limits()", header: http.Header{"X-Padding": {strings.Repeat("p", 70<<10)}},
			status: http.StatusBadRequest, code: "InvalidHeaderValue"},
		"two 1 KiB keys, every character escaped": {path: "/limits(PartitionKey='" + url.PathEscape(strings.Repeat("é", 1024)) +
			"',RowKey='" + url.PathEscape(strings.Repeat("日", 1024)) + "')", status: http.StatusNotFound, code: "ResourceNotFound"},
	} {
		t.Run(name, func(t *testing.T) {
			req := s.signed(t, http.MethodGet, tc.path, nil)
			for k, v := range tc.header {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code || resp.Header.Get("x-ms-request-id") == "" {
				t.Fatalf("URL of %d bytes: %d %q (request id %q): %.200s", len(req.URL.RequestURI()), resp.StatusCode,
					resp.Header.Get("x-ms-error-code"), resp.Header.Get("x-ms-request-id"), body)
			}
			var e struct {
				Error struct {
					Code string `json:"code"`
				} `json:"odata.error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != tc.code {
				t.Fatalf("body is not an Azure error naming %s: %.200s", tc.code, body)
			}
		})
	}
	t.Run("past what the server reads", func(t *testing.T) {
		req := s.signed(t, http.MethodGet, "/limits()?$filter="+strings.Repeat("x", httpapi.ServerMaxHeaderBytes+8192), nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("got %d, want net/http's 431", resp.StatusCode)
		}
	})
}
