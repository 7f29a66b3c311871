package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/tablebridge/tablebridge/internal/prommetrics"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/timedstore"
)

// metricsFlags is serve's -metrics: Prometheus metrics on a listener of
// their own, never the API's, so that scraping needs no account key and
// the API's port exposes nothing but the Table protocol.
type metricsFlags struct {
	addr string
	m    *prommetrics.Metrics // set by start
}

func (f *metricsFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "metrics", "", "serve Prometheus metrics at /metrics on this address, e.g. 127.0.0.1:9090")
}

// start listens on -metrics and serves until ctx ends; nothing when the
// flag is not set.
func (f *metricsFlags) start(ctx context.Context, out io.Writer) error {
	if f.addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	f.m = prommetrics.New()
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", f.m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(out, "metrics on http://%s/metrics\n", ln.Addr())
	return nil
}

// boltOptions report the embedded store's group commits.
func (f *metricsFlags) boltOptions() []boltstore.Option {
	if f.m == nil {
		return nil
	}
	return []boltstore.Option{boltstore.WithCommitObserver(f.m.ObserveGroupCommit)}
}

// wrapStore times st's calls.
func (f *metricsFlags) wrapStore(st store.Store) store.Store {
	if f.m == nil {
		return st
	}
	return timedstore.New(st, f.m.ObserveStoreCall)
}

// observe is the handler's httpapi.Options.Observe; nil without -metrics.
func (f *metricsFlags) observe() func(httpapi.RequestStats) {
	if f.m == nil {
		return nil
	}
	return f.m.ObserveRequest
}
