package testserver

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// Server is the real handler over a store, listening on 127.0.0.1.
type Server struct {
	// URL is the server root, "http://127.0.0.1:PORT", without an account.
	URL string
	// Store is the store the handler serves.
	Store store.Store

	accounts []auth.Account
	now      func() time.Time
	http     *httptest.Server
}

// Option configures New.
type Option func(*config) error

type config struct {
	store       store.Store
	accounts    []auth.Account
	now         func() time.Time
	logger      *slog.Logger
	tls         bool
	tokens      auth.TokenVerifier
	observe     func(httpapi.RequestStats)
	logRequests bool
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

// New starts a server for the duration of the test. Any setup failure
// fails the test at once.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	cfg := config{now: time.Now}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.store == nil {
		st, err := boltstore.Open(filepath.Join(t.TempDir(), "tablebridge.db"))
		if err != nil {
			t.Fatalf("testserver: open boltstore: %v", err)
		}
		t.Cleanup(func() {
			if err := st.Close(); err != nil {
				t.Errorf("testserver: close boltstore: %v", err)
			}
		})
		cfg.store = st
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	accounts := append([]auth.Account{auth.DevStoreAccount()}, cfg.accounts...)

	// The same wiring as tablebridge serve and the Lambda functions.
	svc, err := tables.New(cfg.store, tables.Options{Now: cfg.now})
	if err != nil {
		t.Fatalf("testserver: tables.New: %v", err)
	}
	h, err := httpapi.NewHandler(svc, accounts, httpapi.Options{Now: cfg.now, Logger: cfg.logger, Observe: cfg.observe,
		Tokens: cfg.tokens, LogRequests: cfg.logRequests})
	if err != nil {
		t.Fatalf("testserver: httpapi.NewHandler: %v", err)
	}
	// httptest.NewServer listens on 127.0.0.1 only. Close is registered
	// after the store's Close, so it runs first: no request is in flight
	// when the store closes.
	var hs *httptest.Server
	if cfg.tls {
		hs = httptest.NewTLSServer(h)
	} else {
		hs = httptest.NewServer(h)
	}
	t.Cleanup(hs.Close)
	return &Server{URL: hs.URL, Store: cfg.store, accounts: accounts, now: cfg.now, http: hs}
}

// testWriter routes the handler's log lines into the test log, so an
// internal error shows up next to the failing assertion.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Account returns a configured account by name; the test fails when the
// server does not have it.
func (s *Server) Account(t testing.TB, name string) auth.Account {
	t.Helper()
	for _, a := range s.accounts {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("testserver: no account %q", name)
	return auth.Account{}
}

// AccountURL is the path-style endpoint of an account, as the emulator
// spells it: http://127.0.0.1:PORT/<account>.
func (s *Server) AccountURL(account string) string { return s.URL + "/" + account }

// ConnectionString is the path-style connection string of devstoreaccount1.
func (s *Server) ConnectionString() string {
	cs, _ := s.connectionString(auth.DevStoreAccountName, 0)
	return cs
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
	for _, a := range s.accounts {
		if a.Name != account {
			continue
		}
		if keyIndex < 0 || keyIndex >= len(a.Keys) {
			return "", fmt.Errorf("testserver: account %q has no key %d", account, keyIndex)
		}
		scheme, _, _ := strings.Cut(s.URL, ":")
		return fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
			scheme, a.Name, base64.StdEncoding.EncodeToString(a.Keys[keyIndex]), s.AccountURL(a.Name)), nil
	}
	return "", fmt.Errorf("testserver: no account %q", account)
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
	c, err := aztables.NewServiceClientFromConnectionString(connectionString, s.clientOptions())
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
	c, err := aztables.NewServiceClient(s.AccountURL(account), cred, s.clientOptions())
	if err != nil {
		t.Fatalf("testserver: aztables.NewServiceClient: %v", err)
	}
	return c
}

// clientOptions turn retries off and trust the server's certificate.
func (s *Server) clientOptions() *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: s.http.Client()}}
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
