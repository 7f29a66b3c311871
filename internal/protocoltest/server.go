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
// HTTPClient, ...) with the suite's helpers, which take the test for their
// failures.
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

// AccountConnectionString is the connection string of any configured
// account, signing with its key number keyIndex (0 or 1).
func (s *Server) AccountConnectionString(t testing.TB, account string, keyIndex int) string {
	t.Helper()
	cs, err := s.connectionString(account, keyIndex)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func (s *Server) connectionString(account string, keyIndex int) (string, error) {
	return s.Server.AccountConnectionString(account, keyIndex)
}

// ServiceClient is an aztables client of devstoreaccount1 built from
// ConnectionString, exactly as an application would build it, except that
// retries are off: a failure must surface at once, not after the SDK's
// back-off on a 500 or 503.
func (s *Server) ServiceClient(t testing.TB) *aztables.ServiceClient {
	t.Helper()
	return s.Client(t, s.ConnectionString())
}

// Client is an aztables client built from connectionString, which names
// this server, as ServiceClient is: retries off, and through the server's
// own transport (which trusts its certificate when it runs WithTLS).
func (s *Server) Client(t testing.TB, connectionString string) *aztables.ServiceClient {
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
	return strings.Replace(s.AccountConnectionString(t, account, 0),
		"TableEndpoint="+s.AccountURL(account), "TableEndpoint="+s.AccountURL(account+"-secondary"), 1)
}

// TokenServiceClient is an aztables client of account that authenticates
// with cred ("Authorization: Bearer"), as an application using Microsoft
// Entra ID builds it; the server must run WithTLS for the SDK to send the
// token.
func (s *Server) TokenServiceClient(t testing.TB, account string, cred azcore.TokenCredential) *aztables.ServiceClient {
	t.Helper()
	c, err := aztables.NewServiceClient(s.AccountURL(account), cred, s.ClientOptions())
	if err != nil {
		t.Fatalf("protocoltest: aztables.NewServiceClient: %v", err)
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
