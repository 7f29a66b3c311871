package main

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/stack"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
)

func init() {
	register("serve", "run the local Azure Table endpoint (a drop-in for the emulator on 127.0.0.1:10002)", runServe)
}

type serveConfig struct {
	listen      string
	dataDir     string
	accounts    auth.AccountList
	logRequests bool
	pprofAddr   string
	storeKind   string
	dynamo      dynamoFlags
	tls         tlsFlags
	limits      serveLimits
	oauth       oauthFlags
	metrics     metricsFlags
	browser     browserFlags
}

func runServe(args []string) error {
	var cfg serveConfig
	fs := newFlagSet("serve", "serve [-listen ADDR] [-data DIR | -store memory | -store dynamodb ...] [flags]")
	fs.StringVar(&cfg.listen, "listen", "127.0.0.1:10002", "address to listen on")
	fs.StringVar(&cfg.dataDir, "data", "./.tablebridge", "data directory of the embedded store")
	fs.Var(&cfg.accounts, "account", "account as name:base64key; repeatable (default: the emulator's devstoreaccount1)")
	fs.BoolVar(&cfg.logRequests, "log-requests", false, "log one JSON line per request")
	fs.StringVar(&cfg.pprofAddr, "pprof", "", "serve Go profiles (net/http/pprof) on this address, e.g. 127.0.0.1:6060")
	fs.StringVar(&cfg.storeKind, "store", engineAuto, "storage backend: pebble (embedded, in -data), bolt (embedded, the engine of earlier releases), memory (nothing on disk, gone at exit) or dynamodb; auto: bolt for a -data directory an earlier release wrote, pebble for any other")
	cfg.dynamo.register(fs)
	cfg.limits.register(fs)
	cfg.tls.register(fs)
	cfg.oauth.register(fs)
	cfg.metrics.register(fs)
	cfg.browser.register(fs)
	if err := parseFlags(fs, args, os.Stdout); err != nil {
		return err
	}
	if len(cfg.accounts) == 0 {
		cfg.accounts = auth.AccountList{auth.DevStoreAccount()}
	}
	tuneGC()
	cfg.limits.applyMemoryLimit()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, cfg, os.Stdout)
}

// storeKinds lists what -store takes.
const storeKinds = "auto, pebble, bolt, memory or dynamodb"

// openStore opens cfg's store, of a kind serve accepted, and describes it
// for the start-up lines: which engine, and where.
func openStore(ctx context.Context, cfg serveConfig) (store.Store, string, error) {
	switch cfg.storeKind {
	case "memory":
		// Azurite's --inMemoryPersistence: for test suites that want a
		// clean, fast store and nothing left behind.
		st, err := memstore.New()
		return st, "memory (gone at exit)", err
	case "dynamodb":
		dyn := cfg.dynamo
		dyn.PurgeEvery = purgeEvery
		st, err := dyn.open(ctx)
		if err != nil {
			return nil, "", err
		}
		return st, "dynamodb " + cfg.dynamo.describe(), nil
	}
	// A data directory: -store auto, pebble or bolt.
	engine := cfg.storeKind
	if engine == engineAuto {
		engine = dataDirEngine(cfg.dataDir)
	}
	st, err := openDataDir(cfg.dataDir, engine, "serve", false, cfg.metrics.boltOptions()...)
	if err != nil {
		return nil, "", err
	}
	return st, st.describe(), nil
}

// moveAdvice is what serve says when the data directory holds the bbolt
// store of an earlier release: that -store auto kept serving it with
// bolt, or that -store pebble serves another store beside it; and how to
// move it to pebble.
func moveAdvice(cfg serveConfig, opened string) string {
	if dataDirEngine(cfg.dataDir) != engineBolt || cfg.storeKind == engineBolt {
		return ""
	}
	to := filepath.Clean(cfg.dataDir) + "-pebble"
	kept := "so serve keeps serving it with bolt\n  (new data directories get pebble, docs/serve.md#engines)"
	if opened == enginePebble {
		kept = "which -store pebble does not serve:\n  it serves the pebble store beside it, empty at first (docs/serve.md#engines)"
	}
	return fmt.Sprintf(`  this data directory holds a bbolt store from an earlier release, %s. To move it to pebble, stop serve, then:
    tablebridge migrate -from-data %s -store pebble -data %s
  and serve -data %s (or swap the directories). -store bolt serves it without this note.
`, kept, cfg.dataDir, to, to)
}

// serve runs the server until ctx ends, then shuts down: it stops accepting,
// lets requests in flight finish, and closes the store, so every write that
// was acknowledged is on disk.
func serve(ctx context.Context, cfg serveConfig, out io.Writer) error {
	// The one check of -store, before anything is opened (openStore
	// relies on it).
	switch cfg.storeKind {
	case engineAuto, enginePebble, engineBolt, "memory", "dynamodb":
	default:
		return usageError("serve: unknown -store %q (%s)", cfg.storeKind, storeKinds)
	}
	// The port first: a port in use fails before anything is written.
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return listenError(cfg.listen, err)
	}
	defer ln.Close() // a no-op once the server has closed it
	if err := cfg.metrics.start(ctx, out); err != nil {
		return err
	}
	st, desc, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	advice := ""
	if d, ok := st.(*dataDirStore); ok {
		advice = moveAdvice(cfg, d.engine)
	}
	st = cfg.metrics.wrapStore(st)
	closed := false
	defer func() {
		if !closed {
			st.Close()
		}
	}()
	scheme := "http"
	var tlsConfig *tls.Config
	if cfg.tls.enabled() {
		if tlsConfig, err = cfg.tls.config(cfg.dataDir, out); err != nil {
			return err
		}
		scheme = "https"
	}
	tokens, err := cfg.oauth.verifier(ctx, tlsConfig != nil, out)
	if err != nil {
		return err
	}
	handler, err := stack.New(st, cfg.accounts, cfg.handlerOptions(tokens))
	if err != nil {
		return err
	}
	srv := &http.Server{
		TLSConfig:         tlsConfig,
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		// Past the handler's own URL and header limits, so that it answers
		// an oversize request in Azure's shape rather than net/http with a
		// plain-text 431.
		MaxHeaderBytes: httpapi.ServerMaxHeaderBytes,
	}
	shown, connect := listenAddrs(cfg.listen, ln.Addr())
	fmt.Fprintf(out, "tablebridge listening on %s://%s (store: %s)\n", scheme, shown, desc)
	fmt.Fprint(out, advice)
	if shown != connect {
		fmt.Fprintf(out, "  on every interface: apps on this machine connect to %s://%s, others to this machine's address\n", scheme, connect)
	}
	for _, acc := range cfg.accounts {
		fmt.Fprintf(out, "connection string for %s:\n  %s\n", acc.Name, connectionString(scheme, connect, acc))
	}
	if srv.Handler, err = cfg.browser.mount(srv.Handler, cfg.listen, scheme+"://"+connect, cfg.accounts, out); err != nil {
		return err
	}
	if cfg.pprofAddr != "" {
		if err := servePprof(ctx, cfg.pprofAddr, out); err != nil {
			return err
		}
	}
	errc := make(chan error, 1)
	go func() {
		if tlsConfig != nil {
			errc <- srv.ServeTLS(ln, "", "")
			return
		}
		errc <- srv.Serve(ln)
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(out, "tablebridge shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	shutdownErr := srv.Shutdown(shutdownCtx)
	closed = true
	if err := st.Close(); err != nil {
		return err
	}
	if shutdownErr != nil && !errors.Is(shutdownErr, http.ErrServerClosed) {
		return shutdownErr
	}
	return nil
}

// handlerOptions are the REST API handler's options from serve's flags,
// accepting bearer tokens as tokens verifies them (nil: refused).
func (cfg serveConfig) handlerOptions(tokens auth.TokenVerifier) httpapi.Options {
	opts := httpapi.Options{LogRequests: cfg.logRequests, Limits: cfg.limits.handlerLimits(), Tokens: tokens,
		AnswerBudget: cfg.limits.answerBudget, Observe: cfg.metrics.observe()}
	if cfg.logRequests {
		opts.Logger = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	return opts
}

// listenError says what to do about the usual failures to listen.
func listenError(addr string, err error) error {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return fmt.Errorf("serve: %s is already in use (another tablebridge or the Azure storage emulator?); stop it or choose another -listen address", addr)
	case errors.Is(err, syscall.EACCES):
		return fmt.Errorf("serve: not allowed to listen on %s (ports below 1024 need privileges); choose another -listen address", addr)
	}
	return fmt.Errorf("serve: -listen %s: %w", addr, err)
}

// listenAddrs returns the address to show, as the user gave it with the
// port the listener got (for port 0), and the one a client on this machine
// connects to: loopback when the user gave a wildcard (0.0.0.0, ::, or no
// host), which is no address to connect to.
func listenAddrs(given string, bound net.Addr) (shown, connect string) {
	host, _, err := net.SplitHostPort(given)
	_, port, perr := net.SplitHostPort(bound.String())
	if err != nil || perr != nil {
		return bound.String(), bound.String()
	}
	shown = net.JoinHostPort(host, port)
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if host == "" {
			shown = "0.0.0.0:" + port
		}
		return shown, net.JoinHostPort("127.0.0.1", port)
	}
	return shown, shown
}

// connectionString is what an app pastes: path-style, like the emulator's.
func connectionString(scheme, addr string, acc auth.Account) string {
	key := ""
	if len(acc.Keys) > 0 {
		key = base64.StdEncoding.EncodeToString(acc.Keys[0])
	}
	return fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s://%s/%s;",
		scheme, acc.Name, key, scheme, addr, acc.Name)
}

// servePprof serves the runtime profiles on their own listener, never on the
// API's, until ctx ends.
func servePprof(ctx context.Context, addr string, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(out, "profiles on http://%s/debug/pprof/\n", ln.Addr())
	return nil
}
