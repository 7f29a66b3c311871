package auth_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// The HTTP layer authenticates once per request, then authorizes the
// operation it resolved from the URL and verb.
func Example() {
	v, err := auth.NewVerifier([]auth.Account{auth.DevStoreAccount()}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}

	// A client (here this package's signer; the SDKs sign identically).
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:10002/devstoreaccount1/mytable(PartitionKey='a',RowKey='b')", nil)
	key, _ := auth.ParseAccountFlag("devstoreaccount1:" + auth.DevStoreAccountKey)
	_ = auth.SignSharedKeyLite(req, "devstoreaccount1", key.Keys[0])

	// The server side: the wire path, before '?', still encoded.
	wirePath, _, _ := strings.Cut(req.URL.RequestURI(), "?")
	p, err := v.Authenticate(context.Background(), auth.Request{
		Account:    "devstoreaccount1",
		SignedPath: wirePath,
		Query:      req.URL.Query(),
		Header:     req.Header,
		Method:     req.Method,
		Table:      "mytable",
		ClientIP:   netip.MustParseAddr("127.0.0.1"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Scheme(), p.Authorize(operation.GetEntity, "mytable"), p.AllowsEntity("a", "b"))
	// Output: SharedKeyLite <nil> true
}
