package auth_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// BenchmarkAuthenticateSharedKeyLite measures the per-request cost of the
// common case: a Go/JS/.NET SDK request signed with the first key.
func BenchmarkAuthenticateSharedKeyLite(b *testing.B) {
	v := newVerifier(b, nil)
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:10002/devstoreaccount1/mytable(PartitionKey='pk',RowKey='rk')", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("x-ms-date", testNow.Format(http.TimeFormat))
	if err := auth.SignSharedKeyLite(req, devAccount, devKey(b)); err != nil {
		b.Fatal(err)
	}
	r := auth.Request{
		Account: devAccount, SignedPath: req.URL.EscapedPath(), Query: req.URL.Query(),
		Header: req.Header, Method: req.Method, Table: "mytable", Now: testNow,
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Authenticate(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAuthenticateTableSAS measures a table SAS without a stored
// policy.
func BenchmarkAuthenticateTableSAS(b *testing.B) {
	v := newVerifier(b, nil)
	q, err := auth.NewTableSAS(devAccount, devKey(b), auth.TableSASValues{Table: "mytable", Permissions: "raud", Start: hourAgo, Expiry: inAnHour})
	if err != nil {
		b.Fatal(err)
	}
	r := sasRequest("mytable", q)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := v.Authenticate(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
}
