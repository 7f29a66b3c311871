package testserver

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// Server is the real handler over a store, listening on 127.0.0.1: a
// tablebridgetest.Server (its URL, Store, AccountURL, ConnectionString,
// HTTPClient, ...) with the suite's helpers, which take the test for their
// failures.
type Server struct {
	*tablebridgetest.Server
}

// Option configures New.
type Option func(*config) error

type config struct {
	store        store.Store
	accounts     []auth.Account
	now          func() time.Time
	logger       *slog.Logger
	tls          bool
	tokens       auth.TokenVerifier
	observe      func(httpapi.RequestStats)
	logRequests  bool
	answerBudget int
}

// WithLogger sends the handler's log to l instead of the test log (warnings
// and errors only).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}

// WithTLS serves HTTPS (httptest's certificate, which the Server's clients
// trust), as bearer tokens require.
func WithTLS() Option {
	return func(c *config) error {
		c.tls = true
		return nil
	}
}

// WithTokens accepts bearer tokens checked by tv (shared/oauth).
func WithTokens(tv auth.TokenVerifier) Option {
	return func(c *config) error {
		c.tokens = tv
		return nil
	}
}

// WithLogRequests makes the handler log one line per request (to the
// WithLogger logger).
func WithLogRequests() Option {
	return func(c *config) error {
		c.logRequests = true
		return nil
	}
}

// WithStore serves st instead of a fresh boltstore. The caller owns st and
// closes it; the Server only stops serving it.
func WithStore(st store.Store) Option {
	return func(c *config) error {
		if st == nil {
			return fmt.Errorf("testserver: WithStore(nil)")
		}
		c.store = st
		return nil
	}
}

// WithAccounts adds accounts besides devstoreaccount1. An account with two
// keys accepts a signature made with either.
func WithAccounts(accounts ...auth.Account) Option {
	return func(c *config) error {
		for _, a := range accounts {
			if a.Name == auth.DevStoreAccountName {
				return fmt.Errorf("testserver: %s is always configured", a.Name)
			}
		}
		c.accounts = append(c.accounts, accounts...)
		return nil
	}
}

// WithObserve has the handler report every answered request to fn
// (httpapi.Options.Observe), as serve -metrics does.
func WithObserve(fn func(httpapi.RequestStats)) Option {
	return func(c *config) error {
		c.observe = fn
		return nil
	}
}

// WithNow sets the clock of the handler (response dates, request date
// checks) and of the service (entity Timestamps).
func WithNow(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return fmt.Errorf("testserver: WithNow(nil)")
		}
		c.now = now
		return nil
	}
}

// WithAnswerBudget sets the handler's httpapi.Options.AnswerBudget, so a
// test can make query answers end early with few entities.
func WithAnswerBudget(n int) Option {
	return func(c *config) error {
		c.answerBudget = n
		return nil
	}
}

// New starts a server for the duration of the test, through
// tablebridgetest.NewServer: the suite's default store is a bbolt file in
// t.TempDir() (the durable store the local server runs), where
// tablebridgetest's is memory. Any setup failure fails the test at once.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var cfg config
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			t.Fatal(err)
		}
	}
	topts := []tablebridgetest.Option{tablebridgetest.WithBoltStore(t.TempDir())}
	if cfg.store != nil {
		topts = append(topts, tablebridgetest.WithStore(cfg.store))
	}
	if len(cfg.accounts) > 0 {
		topts = append(topts, tablebridgetest.WithAccounts(cfg.accounts...))
	}
	if cfg.now != nil {
		topts = append(topts, tablebridgetest.WithNow(cfg.now))
	}
	if cfg.logger != nil {
		topts = append(topts, tablebridgetest.WithLogger(cfg.logger))
	}
	if cfg.tls {
		topts = append(topts, tablebridgetest.WithTLS())
	}
	if cfg.tokens != nil {
		topts = append(topts, tablebridgetest.WithTokenVerifier(cfg.tokens))
	}
	if cfg.logRequests {
		topts = append(topts, tablebridgetest.WithLogRequests())
	}
	if cfg.observe != nil {
		topts = append(topts, tablebridgetest.WithObserve(cfg.observe))
	}
	if cfg.answerBudget != 0 {
		topts = append(topts, tablebridgetest.WithAnswerBudget(cfg.answerBudget))
	}
	return &Server{Server: tablebridgetest.NewServer(t, topts...)}
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
	t.Fatalf("testserver: no account %q", name)
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
		t.Fatalf("testserver: aztables.NewServiceClientFromConnectionString: %v", err)
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
		t.Fatalf("testserver: aztables.NewServiceClient: %v", err)
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
		t.Fatalf("testserver: aztables.NewServiceClientFromConnectionString: %v", err)
	}
	return c
}
