package protocoltest

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// Server is the real handler over a store, listening on 127.0.0.1: a
// tablebridgetest.Server (its URL, Store, AccountURL, ConnectionString,
// Client, HTTPClient, ...) with the suites' helpers, which take the test
// for their failures.
type Server struct {
	*tablebridgetest.Server
}

// New starts a server for the duration of the test, through
// tablebridgetest.NewServer with opts (tablebridgetest's options): the
// suite's default store is a bbolt file in t.TempDir() (the durable store
// the local server runs), where tablebridgetest's is memory;
// tablebridgetest.WithStore replaces it. Any setup failure fails the test
// at once.
func New(t testing.TB, opts ...tablebridgetest.Option) *Server {
	t.Helper()
	return &Server{Server: tablebridgetest.NewServer(t, append([]tablebridgetest.Option{tablebridgetest.WithBoltStore(t.TempDir())}, opts...)...)}
}

// Account returns a configured account by name; the test fails when the
// server does not have it.
func (s *Server) Account(t testing.TB, name string) auth.Account {
	t.Helper()
	for _, a := range s.Accounts() {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("protocoltest: no account %q", name)
	return auth.Account{}
}

// accountConnectionString is account's connection string, signing with
// its key number keyIndex (0 or 1); the test fails when there is none.
func (s *Server) accountConnectionString(t testing.TB, account string, keyIndex int) string {
	t.Helper()
	cs, err := s.AccountConnectionString(account, keyIndex)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// ClientFrom is an aztables client built from connectionString, which
// names this server, as an application builds one from its configuration,
// with the server's ClientOptions: retries off, and its transport (which
// trusts its certificate when it runs WithTLS).
func (s *Server) ClientFrom(t testing.TB, connectionString string) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientFromConnectionString(connectionString, s.ClientOptions())
	if err != nil {
		t.Fatalf("protocoltest: aztables.NewServiceClientFromConnectionString: %v", err)
	}
	return c
}

// secondaryConnectionString is account's connection string (key 0) with
// the table endpoint on its secondary location, <account>-secondary.
func (s *Server) secondaryConnectionString(t testing.TB, account string) string {
	t.Helper()
	return strings.Replace(s.accountConnectionString(t, account, 0),
		"TableEndpoint="+s.AccountURL(account), "TableEndpoint="+s.AccountURL(account+"-secondary"), 1)
}

// TokenServiceClient is tablebridgetest's TokenClient, failing the test
// when the client cannot be built: an aztables client of account that
// authenticates with cred ("Authorization: Bearer"); the server must run
// WithTLS for the SDK to send the token.
func (s *Server) TokenServiceClient(t testing.TB, account string, cred azcore.TokenCredential) *aztables.ServiceClient {
	t.Helper()
	c, err := s.TokenClient(account, cred)
	if err != nil {
		t.Fatalf("protocoltest: %v", err)
	}
	return c
}

// NewServiceClient builds an aztables client from any connection string,
// with retries off.
func NewServiceClient(t testing.TB, connectionString string) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClientFromConnectionString(connectionString, &aztables.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	if err != nil {
		t.Fatalf("protocoltest: aztables.NewServiceClientFromConnectionString: %v", err)
	}
	return c
}
