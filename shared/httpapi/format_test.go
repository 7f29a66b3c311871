package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

// TestFormatRefusals: payloads and answers tablebridge does not speak are
// refused with Azure's codes ("Payload format for Table service
// operations": Atom/XML is for pre-2015 clients), and nothing is stored.
func TestFormatRefusals(t *testing.T) {
	t.Parallel()
	srv := protocoltest.New(t)
	sc := srv.Client()
	if _, err := sc.CreateTable(context.Background(), "formats", nil); err != nil {
		t.Fatal(err)
	}
	entity := []byte(`{"PartitionKey":"p","RowKey":"r"}`)
	for _, tc := range []struct {
		name   string
		req    protocoltest.Request
		status int
		code   string
	}{
		{"AtomPayload", protocoltest.Request{Method: http.MethodPost, Path: "/formats", Body: entity,
			Header: http.Header{"Content-Type": {"application/atom+xml"}}}, http.StatusUnsupportedMediaType, "AtomFormatNotSupported"},
		{"UnknownContentType", protocoltest.Request{Method: http.MethodPost, Path: "/formats", Body: entity,
			Header: http.Header{"Content-Type": {"text/plain"}}}, http.StatusBadRequest, "InvalidHeaderValue"},
		{"MalformedContentType", protocoltest.Request{Method: http.MethodPost, Path: "/formats", Body: entity,
			Header: http.Header{"Content-Type": {"application/json; ;"}}}, http.StatusBadRequest, "InvalidHeaderValue"},
		{"AtomAccept", protocoltest.Request{Method: http.MethodGet, Path: "/formats()",
			Header: http.Header{"Accept": {"application/atom+xml"}}}, http.StatusUnsupportedMediaType, "AtomFormatNotSupported"},
		{"UnknownFormat", protocoltest.Request{Method: http.MethodGet, Path: "/formats()", RawQuery: "$format=application/xml"},
			http.StatusBadRequest, "InvalidInput"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := srv.Do(t, tc.req)
			if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code {
				t.Fatalf("%d %s, want %d %s: %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.status, tc.code, resp.Body)
			}
		})
	}
	resp := srv.Do(t, protocoltest.Request{Method: http.MethodGet, Path: "/formats()"})
	if resp.StatusCode != http.StatusOK || string(resp.Body) == "" || strings.Contains(string(resp.Body), `"RowKey"`) {
		t.Fatalf("after the refusals the table holds: %d %s", resp.StatusCode, resp.Body)
	}
}
