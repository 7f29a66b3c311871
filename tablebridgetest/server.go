package tablebridgetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/oauth"
	"github.com/tablebridge/tablebridge/shared/stack"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
)

// DevStoreAccountName and DevStoreAccountKey are the storage emulator's
// well-known development account, which every Server has.
const (
	DevStoreAccountName = auth.DevStoreAccountName
	DevStoreAccountKey  = auth.DevStoreAccountKey
)

// Server is a running tablebridge on 127.0.0.1.
type Server struct {
	// URL is the server root, "http://127.0.0.1:PORT" (https with
	// WithTLS), without an account: accounts are path-style, as on the
	// emulator (AccountURL).
	URL string
	// Store is the store the server serves.
	Store store.Store

	accounts  []auth.Account
	now       func() time.Time
	http      *httptest.Server
	client    *aztables.ServiceClient
	cred      *aztables.SharedKeyCredential
	tokens    bool
	tokenKey  *ecdsa.PrivateKey
	closeOnce sync.Once
	closeErr  error
	closers   []func() error
}

// Option configures a Server.
type Option func(*config) error

type config struct {
	store       store.Store
	bolt        string // directory of a bolt file, when WithBoltStore
	accounts    []auth.Account
	now         func() time.Time
	logger      *slog.Logger
	tls         bool
	tokens      auth.TokenVerifier
	basicTokens bool
	logRequests bool
	// answerBudget is httpapi.Options.AnswerBudget; 0 keeps its default.
	answerBudget int
	observe      func(httpapi.RequestStats)
}

// WithAccount adds an account besides devstoreaccount1, with its base64
// key, as `tablebridge serve -account name:key` does.
func WithAccount(name, base64Key string) Option {
	return func(c *config) error {
		acc, err := auth.ParseAccountFlag(name + ":" + base64Key)
		if err != nil {
			return fmt.Errorf("tablebridgetest: %w", err)
		}
		return WithAccounts(acc)(c)
	}
}

// WithAccounts adds accounts besides devstoreaccount1. An account with two
// keys accepts a signature made with either.
func WithAccounts(accounts ...auth.Account) Option {
	return func(c *config) error {
		for _, a := range accounts {
			if a.Name == auth.DevStoreAccountName {
				return fmt.Errorf("tablebridgetest: %s is always configured", a.Name)
			}
		}
		c.accounts = append(c.accounts, accounts...)
		return nil
	}
}

// WithTLS serves HTTPS with a certificate for 127.0.0.1 that the Server's
// clients trust (Certificate returns it for others). The Azure SDKs send
// bearer tokens only over HTTPS.
func WithTLS() Option {
	return func(c *config) error {
		c.tls = true
		return nil
	}
}

// WithBearerTokens accepts bearer tokens as `serve -oauth basic` does:
// a token's issuer must be Microsoft Entra ID's, its audience the storage
// service's or this endpoint, and its lifetime current; its signature is
// not checked, so TokenCredential can mint tokens without a key anyone
// trusts. Every token may do everything unless roles assigns roles
// (oauth.Config's Roles; its other fields do not apply). It implies
// WithTLS.
func WithBearerTokens(roles *oauth.Config) Option {
	return func(c *config) error {
		b, err := oauth.NewBasic(roles)
		if err != nil {
			return fmt.Errorf("tablebridgetest: %w", err)
		}
		c.tokens, c.basicTokens, c.tls = b, true, true
		return nil
	}
}

// WithTokenVerifier accepts bearer tokens checked by tv, for instance
// shared/oauth's verified mode against a test issuer. Unlike
// WithBearerTokens it leaves the scheme alone: the Azure SDKs send tokens
// only over HTTPS (add WithTLS), and over HTTP the server refuses them as
// Azure does, which a test may want to see.
func WithTokenVerifier(tv auth.TokenVerifier) Option {
	return func(c *config) error {
		if tv == nil {
			return errors.New("tablebridgetest: WithTokenVerifier(nil)")
		}
		c.tokens, c.basicTokens = tv, false
		return nil
	}
}

// WithStore serves st instead of a fresh in-memory store. The caller owns
// st and closes it; the Server only stops serving it.
func WithStore(st store.Store) Option {
	return func(c *config) error {
		if st == nil {
			return errors.New("tablebridgetest: WithStore(nil)")
		}
		c.store, c.bolt = st, ""
		return nil
	}
}

// WithBoltStore serves a bbolt file in dir, the store of `tablebridge
// serve`, instead of memory: for tests of durability or of the file. The
// Server closes it.
func WithBoltStore(dir string) Option {
	return func(c *config) error {
		if dir == "" {
			return errors.New("tablebridgetest: WithBoltStore needs a directory")
		}
		c.store, c.bolt = nil, dir
		return nil
	}
}

// WithNow sets the clock of the server: the Date of its answers, the
// window in which it accepts a request's x-ms-date, and entity Timestamps.
func WithNow(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return errors.New("tablebridgetest: WithNow(nil)")
		}
		c.now = now
		return nil
	}
}

// WithLogger sends the server's log (internal errors, and with
// WithLogRequests one line per request) to l; the default discards it
// (NewServer: warnings and errors go to the test log).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		c.logger = l
		return nil
	}
}

// WithAnswerBudget bounds the bytes of one query answer, as `serve
// -answer-bytes` does: a page that would pass it ends early with a
// continuation.
func WithAnswerBudget(n int) Option {
	return func(c *config) error {
		c.answerBudget = n
		return nil
	}
}

// WithObserve hands the figures of every answered request to observe
// (httpapi.Options.Observe), as `serve -metrics` counts them.
func WithObserve(observe func(httpapi.RequestStats)) Option {
	return func(c *config) error {
		c.observe = observe
		return nil
	}
}

// WithLogRequests logs one line per request, as `serve -log-requests`.
func WithLogRequests() Option {
	return func(c *config) error {
		c.logRequests = true
		return nil
	}
}

// NewServer starts a server for the duration of the test and stops it with
// t.Cleanup. A setup failure fails the test at once.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	// The test's log gets the server's warnings and errors, next to the
	// assertion that fails because of them; an option may replace it.
	logger := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := Start(append([]Option{WithLogger(logger)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("tablebridgetest: %v", err)
		}
	})
	return s
}

// Start starts a server outside a test; Close stops it.
func Start(opts ...Option) (*Server, error) {
	cfg := config{now: time.Now, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	s := &Server{accounts: append([]auth.Account{auth.DevStoreAccount()}, cfg.accounts...), now: cfg.now, tokens: cfg.basicTokens}
	if s.tokens {
		// Basic mode checks no signature; the tokens are signed all the
		// same, so they are well-formed JWTs any JWT library reads.
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("tablebridgetest: %w", err)
		}
		s.tokenKey = key
	}
	switch {
	case cfg.store != nil:
		s.Store = cfg.store
	case cfg.bolt != "":
		st, err := boltstore.Open(filepath.Join(cfg.bolt, "tablebridge.db"))
		if err != nil {
			return nil, fmt.Errorf("tablebridgetest: %w", err)
		}
		s.Store, s.closers = st, append(s.closers, st.Close)
	default:
		st, err := memstore.New()
		if err != nil {
			return nil, fmt.Errorf("tablebridgetest: %w", err)
		}
		s.Store, s.closers = st, append(s.closers, st.Close)
	}
	// The same stack as tablebridge serve and the Lambda functions.
	h, err := stack.New(s.Store, s.accounts, httpapi.Options{Now: cfg.now, Logger: cfg.logger,
		Tokens: cfg.tokens, LogRequests: cfg.logRequests, AnswerBudget: cfg.answerBudget, Observe: cfg.observe})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("tablebridgetest: %w", err), s.closeStore())
	}
	// httptest listens on 127.0.0.1 only.
	if cfg.tls {
		s.http = httptest.NewTLSServer(h)
	} else {
		s.http = httptest.NewServer(h)
	}
	s.URL = s.http.URL
	if s.cred, err = aztables.NewSharedKeyCredential(auth.DevStoreAccountName, auth.DevStoreAccountKey); err == nil {
		s.client, err = aztables.NewServiceClientWithSharedKey(s.AccountURL(auth.DevStoreAccountName), s.cred, s.ClientOptions())
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("tablebridgetest: %w", err), s.Close())
	}
	return s, nil
}

// Close stops the server, waiting for requests in flight, then closes the
// store it opened (not one given with WithStore). Closing twice is harmless.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.http.Close()
		s.closeErr = s.closeStore()
	})
	return s.closeErr
}

func (s *Server) closeStore() error {
	var errs []error
	for _, c := range s.closers {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// Accounts lists the server's accounts, devstoreaccount1 first.
func (s *Server) Accounts() []auth.Account { return slices.Clone(s.accounts) }

// Now is the server's clock (WithNow).
func (s *Server) Now() time.Time { return s.now() }

// AccountURL is the path-style table endpoint of an account, as the
// emulator spells it: http://127.0.0.1:PORT/<account>.
func (s *Server) AccountURL(account string) string { return s.URL + "/" + account }

// ConnectionString is devstoreaccount1's connection string, what an
// application reads from its configuration.
func (s *Server) ConnectionString() string {
	cs, _ := s.AccountConnectionString(auth.DevStoreAccountName, 0)
	return cs
}

// AccountConnectionString is the connection string of any of the server's
// accounts, signing with its key number keyIndex (0, or 1 for an account
// given two keys).
func (s *Server) AccountConnectionString(account string, keyIndex int) (string, error) {
	for _, a := range s.accounts {
		if a.Name != account {
			continue
		}
		if keyIndex < 0 || keyIndex >= len(a.Keys) {
			return "", fmt.Errorf("tablebridgetest: account %q has no key %d", account, keyIndex)
		}
		scheme, _, _ := strings.Cut(s.URL, ":")
		return fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
			scheme, a.Name, base64.StdEncoding.EncodeToString(a.Keys[keyIndex]), s.AccountURL(a.Name)), nil
	}
	return "", fmt.Errorf("tablebridgetest: no account %q", account)
}

// Credential is devstoreaccount1's shared key credential, for
// aztables.NewServiceClientWithSharedKey and NewClientWithSharedKey.
func (s *Server) Credential() *aztables.SharedKeyCredential { return s.cred }

// Client is a ready aztables client of devstoreaccount1 (ClientOptions).
func (s *Server) Client() *aztables.ServiceClient { return s.client }

// ClientOptions are the options of the server's clients: its HTTP client,
// which trusts its certificate under WithTLS, and no retries, so a failure
// surfaces at once rather than after the SDK's back-off on a 500 or 503.
func (s *Server) ClientOptions() *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{MaxRetries: -1}, Transport: s.http.Client()}}
}

// Handler is the server's http.Handler, to serve the same service and
// store behind another listener or router.
func (s *Server) Handler() http.Handler { return s.http.Config.Handler }

// HTTPClient is an *http.Client for raw requests to the server; it trusts
// the server's certificate under WithTLS.
func (s *Server) HTTPClient() *http.Client { return s.http.Client() }

// Certificate is the certificate of a WithTLS server (nil otherwise), for a
// client that does not use HTTPClient: add it to an x509.CertPool, or write
// it out for SSL_CERT_FILE.
func (s *Server) Certificate() *x509.Certificate { return s.http.Certificate() }

// testWriter routes the server's log lines into the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
