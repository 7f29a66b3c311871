package httpapi

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// TestEveryOperationHasAnEndpoint: resolveOperation can reach every
// operation of shared/operation's table but Preflight, so each needs a
// handler here, and a changeset every entity write, so each of those
// needs its batch answer (part); adding an operation without them fails.
func TestEveryOperationHasAnEndpoint(t *testing.T) {
	for _, op := range operation.All() {
		ok := int(op) < len(endpoints) && endpoints[op].serve != nil
		if ok == (op == operation.Preflight) {
			t.Errorf("%s: endpoint present %v", op, ok)
		}
		if hasPart := ok && endpoints[op].part != nil; hasPart != op.WritesEntity() {
			t.Errorf("%s: batch answer present %v, writes an entity %v", op, hasPart, op.WritesEntity())
		}
	}
}

// TestResolveOperationRefusals: what Azure answers when the table matches
// nothing, and the header rules checked before it.
func TestResolveOperationRefusals(t *testing.T) {
	entity := resource{kind: operation.PathEntity, table: "t"}
	tests := []struct {
		name   string
		method string
		header http.Header
		res    resource
		query  string
		want   apierr.Code
	}{
		{"service without restype", http.MethodGet, nil, resource{kind: operation.PathService}, "comp=properties", apierr.InvalidURI},
		{"service, unknown comp", http.MethodGet, nil, resource{kind: operation.PathService}, "restype=service&comp=acl", apierr.InvalidQueryParameterValue},
		{"delete on tables", http.MethodDelete, nil, resource{kind: operation.PathTables}, "", apierr.UnsupportedHTTPVerb},
		{"If-None-Match on a replace", http.MethodPut, http.Header{"If-None-Match": {"*"}}, entity, "", apierr.InvalidInput},
		{"If-None-Match on a post to an entity", http.MethodPost, http.Header{"If-None-Match": {"*"}}, entity, "", apierr.InvalidInput},
		{"tunnel from a PUT", http.MethodPut, http.Header{"X-Http-Method": {"MERGE"}}, entity, "", apierr.XMethodNotUsingPost},
		{"tunnel to GET", http.MethodPost, http.Header{"X-Http-Method": {"GET"}}, entity, "", apierr.XMethodIncorrectValue},
		{"tunnel to MERGE on a table's entities", http.MethodPost, http.Header{"X-Http-Method": {"MERGE"}}, resource{kind: operation.PathEntities, table: "t"}, "", apierr.UnsupportedHTTPVerb},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &http.Request{Method: tc.method, Header: tc.header}
			if r.Header == nil {
				r.Header = http.Header{}
			}
			q, _ := url.ParseQuery(tc.query)
			_, err := resolveOperation(r, tc.res, q)
			if e, ok := apierr.As(err); !ok || e.Code != tc.want {
				t.Errorf("got %v, want %s", err, tc.want)
			}
		})
	}
}

// BenchmarkResolveOperation: the table lookup for a mix of requests, one
// of each path shape (what every request pays before its handler runs).
func BenchmarkResolveOperation(b *testing.B) {
	entity := resource{kind: operation.PathEntity, table: "t", partitionKey: "p", rowKey: "r"}
	cases := []struct {
		method string
		header http.Header
		res    resource
		query  url.Values
	}{
		{http.MethodGet, http.Header{}, resource{kind: operation.PathTables}, url.Values{}},
		{http.MethodGet, http.Header{}, entity, url.Values{}},
		{http.MethodPut, http.Header{"If-Match": {"*"}}, entity, url.Values{}},
		{http.MethodPost, http.Header{"X-Http-Method": {"MERGE"}}, entity, url.Values{}},
		{http.MethodGet, http.Header{}, resource{kind: operation.PathEntities, table: "t"}, url.Values{"$filter": {"x eq 1"}}},
		{http.MethodPut, http.Header{}, resource{kind: operation.PathEntities, table: "t"}, url.Values{"comp": {"acl"}}},
		{http.MethodPost, http.Header{}, resource{kind: operation.PathBatch}, url.Values{}},
		{http.MethodGet, http.Header{}, resource{kind: operation.PathService}, url.Values{"restype": {"service"}, "comp": {"properties"}}},
	}
	reqs := make([]*http.Request, len(cases))
	for i, c := range cases {
		reqs[i] = &http.Request{Method: c.method, Header: c.header}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := cases[i%len(cases)]
		if _, err := resolveOperation(reqs[i%len(cases)], c.res, c.query); err != nil {
			b.Fatal(err)
		}
	}
}
