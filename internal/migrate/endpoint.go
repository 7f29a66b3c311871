package migrate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// Endpoint is an Azure Table endpoint opened from a connection string or a
// SAS URL: real Azure, Azurite, Cosmos DB's Table API or a tablebridge.
type Endpoint struct {
	client *aztables.ServiceClient
	// url is the account URL without credentials, for Describe.
	url string
	// table is the one table a table SAS (tn=...) reaches; "" otherwise.
	table string
}

// EndpointOptions tune the SDK client.
type EndpointOptions struct {
	// MaxRetries is how often the SDK retries a request that failed with
	// 408, 429, 500, 502, 503 or 504 or a network error, with exponential
	// back-off and jitter and honouring Retry-After. Default 8; -1 turns
	// retries off.
	MaxRetries int32
	// RetryDelay is the first back-off (default 500 ms); MaxRetryDelay caps
	// it (default 30 s).
	RetryDelay    time.Duration
	MaxRetryDelay time.Duration
	// TryTimeout bounds one attempt (default 2 min), so a stalled connection
	// is retried instead of hanging the migration.
	TryTimeout time.Duration
	// Transport replaces the HTTP client (tests); by default one with enough
	// idle connections per host for the parallel writers.
	Transport policy.Transporter
}

// OpenEndpoint opens spec, which is either
//   - a connection string: AccountName with AccountKey or
//     SharedAccessSignature, and TableEndpoint or DefaultEndpointsProtocol
//     plus EndpointSuffix; or UseDevelopmentStorage=true; or
//   - a URL, normally carrying a SAS query: an account SAS on the account
//     URL, or a table SAS (tn=...) on the account or table URL.
//
// The connection string is parsed here rather than by aztables because
// aztables ignores TableEndpoint when the string carries a
// SharedAccessSignature, which would send an emulator's SAS to Azure.
func OpenEndpoint(spec string, opts EndpointOptions) (*Endpoint, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, errors.New("empty endpoint: give a connection string or a SAS URL")
	}
	copts := clientOptions(opts)
	if strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://") {
		return openURL(spec, copts)
	}
	cs, err := auth.ParseConnectionString(spec)
	if err != nil {
		return nil, err
	}
	if cs.Key != "" {
		cred, err := aztables.NewSharedKeyCredential(cs.Account, cs.Key)
		if err != nil {
			return nil, fmt.Errorf("connection string: AccountKey: %w", err)
		}
		client, err := aztables.NewServiceClientWithSharedKey(cs.TableEndpoint, cred, copts)
		if err != nil {
			return nil, err
		}
		return &Endpoint{client: client, url: cs.TableEndpoint}, nil
	}
	return openURL(cs.TableEndpoint+"?"+strings.TrimPrefix(cs.SAS, "?"), copts)
}

func openURL(raw string, copts *aztables.ClientOptions) (*Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("endpoint URL: %w", err)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("endpoint URL %q has no host", redactURL(u))
	}
	q := u.Query()
	if q.Get("sig") == "" {
		return nil, fmt.Errorf("endpoint URL %q carries no SAS (no signature parameter); give a SAS URL or a connection string", redactURL(u))
	}
	table := q.Get("tn")
	// A table SAS is often handed out on the table's own URL
	// (https://acct.table.core.windows.net/mytable?...&tn=mytable); the
	// client needs the account URL.
	path := strings.TrimSuffix(u.Path, "/")
	if table != "" {
		if i := strings.LastIndexByte(path, '/'); i >= 0 && strings.EqualFold(strings.TrimSuffix(path[i+1:], "()"), table) {
			path = path[:i]
		}
	}
	base := u.Scheme + "://" + u.Host + path
	client, err := aztables.NewServiceClientWithNoCredential(base+"?"+u.RawQuery, copts)
	if err != nil {
		return nil, err
	}
	return &Endpoint{client: client, url: base, table: table}, nil
}

// redactURL drops the query, which holds the signature.
func redactURL(u *url.URL) string {
	c := *u
	c.RawQuery = ""
	return c.String()
}

func clientOptions(o EndpointOptions) *aztables.ClientOptions {
	if o.MaxRetries == 0 {
		o.MaxRetries = 8
	}
	if o.RetryDelay == 0 {
		o.RetryDelay = 500 * time.Millisecond
	}
	if o.MaxRetryDelay == 0 {
		o.MaxRetryDelay = 30 * time.Second
	}
	if o.TryTimeout == 0 {
		o.TryTimeout = 2 * time.Minute
	}
	transport := o.Transport
	if transport == nil {
		transport = &http.Client{Transport: &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			ForceAttemptHTTP2:   true,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 128,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 10 * time.Second,
		}}
	}
	return &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{
		Retry: policy.RetryOptions{
			MaxRetries:    o.MaxRetries,
			RetryDelay:    o.RetryDelay,
			MaxRetryDelay: o.MaxRetryDelay,
			TryTimeout:    o.TryTimeout,
			// azcore's defaults plus nothing: 408, 429, 500, 502, 503, 504.
			// Azure's throttling is 503 ServerBusy; Cosmos DB's is 429.
		},
		Transport:       transport,
		PerCallPolicies: []policy.Policy{capturePolicy{}},
	}}
}

// ProbeTimeout bounds Probe's connection attempt.
const ProbeTimeout = 5 * time.Second

// Probe opens a TCP connection to the endpoint's host, so that an endpoint
// that is down or mistyped is reported at once ("cannot reach URL:
// connection refused") instead of after the SDK's retries, which are meant
// for transient failures in the middle of a run.
func (e *Endpoint) Probe(ctx context.Context) error { return ProbeURL(ctx, e.url) }

// ProbeURL opens and closes a TCP connection to the host of rawURL (port 80
// or 443 by its scheme when it names none), within ProbeTimeout. The error
// says "cannot reach URL: why" in words a user can act on.
func ProbeURL(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	host := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", host)
	if err == nil {
		return conn.Close()
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err() // interrupted
	}
	reason := err.Error()
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		reason = "connection refused (is the server running, on this port?)"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		reason = "no such host " + dnsErr.Name
	case errors.Is(err, context.DeadlineExceeded):
		reason = fmt.Sprintf("no answer within %s", ProbeTimeout)
	}
	return fmt.Errorf("cannot reach %s: %s", rawURL, reason)
}

// Describe is the account URL without credentials.
func (e *Endpoint) Describe() string { return e.url }

// Client is the SDK client, for callers that need another operation.
func (e *Endpoint) Client() *aztables.ServiceClient { return e.client }
