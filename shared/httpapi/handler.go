package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// Options configure a Handler.
type Options struct {
	// Now returns the current time; time.Now when nil. It dates responses
	// and checks request dates and SAS windows.
	Now func() time.Time
	// NewRequestID returns a fresh x-ms-request-id; a fast unique id when nil.
	NewRequestID func() string
	// Logger receives one line per request when LogRequests is set, and
	// internal errors always. slog.Default() when nil.
	Logger      *slog.Logger
	LogRequests bool
	// Timeout bounds each operation's store work; 30 s when 0.
	Timeout time.Duration
	// TrustForwardedHeaders takes X-Forwarded-Proto and X-Forwarded-For from
	// a proxy in front (API Gateway); off for the local server.
	TrustForwardedHeaders bool
	// Tokens, when set, accepts "Authorization: Bearer" tokens it verifies
	// (shared/oauth) beside Shared Key and SAS; nil refuses them.
	Tokens auth.TokenVerifier
	// BatchBoundary returns the id used in $batch response boundaries; a
	// fresh request id when nil. Tests inject it for byte-stable output.
	BatchBoundary func() string
	// Limits bound bodies, answers and requests in flight (see Limits).
	Limits Limits
	// AnswerBudget bounds the body of a query answer (Query Entities, Query
	// Tables, a batch's lone query) as AnswerCost counts it: a page that
	// would grow past it ends early with a continuation (answer_budget.go).
	// DefaultAnswerBudget when 0.
	AnswerBudget int
	// AnswerCost is what a piece of answer body costs on the way to the
	// client; its length when nil. Behind Lambda the body travels as a JSON
	// string inside the proxy response, where escaping makes it larger
	// (lambdafn sets the cost of its envelope).
	AnswerCost func([]byte) int
	// Observe, when set, receives the figures of every answered request
	// (see RequestStats), after the answer is written. It runs on the
	// request's goroutine and must be quick and safe for concurrent use.
	Observe func(RequestStats)
}

// Handler serves the Table REST API.
type Handler struct {
	svc      *tables.Service
	verifier *auth.Verifier
	opts     Options
	log      *slog.Logger
	cors     corsCache
	dates    dateCache
	// admission counts what is in flight against opts.Limits.
	admission admission
}

// NewHandler returns the REST API handler over svc for accounts; the local
// server, every Lambda function and tablebridgetest build it with its
// service over a store in one call (shared/stack). Its verifier reads the stored access policies a table SAS names
// ("si") from svc, and accepts bearer tokens when opts.Tokens is set.
func NewHandler(svc *tables.Service, accounts []auth.Account, opts Options) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("httpapi: a service is required")
	}
	var vopts []auth.VerifierOption
	if opts.Tokens != nil {
		vopts = append(vopts, auth.WithTokens(opts.Tokens))
	}
	verifier, err := auth.NewVerifier(accounts, svc.StoredAccessPolicies, vopts...)
	if err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.NewRequestID == nil {
		opts.NewRequestID = newRequestIDFunc()
	}
	if opts.Timeout == 0 {
		opts.Timeout = 30 * time.Second
	}
	opts.Limits.setDefaults()
	if opts.AnswerBudget <= 0 {
		opts.AnswerBudget = DefaultAnswerBudget
	}
	if opts.AnswerCost == nil {
		opts.AnswerCost = bodyLen
	}
	if opts.BatchBoundary == nil {
		opts.BatchBoundary = opts.NewRequestID
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Handler{svc: svc, verifier: verifier, opts: opts, log: log}, nil
}

type signedPathKey struct{}

// WithSignedPath records the path the client signed when it differs from
// the path the handler routes on: an API Gateway stage prefix (/Prod/...) or
// a custom domain's base path is part of the SharedKey string-to-sign but
// not of the event's resource path.
func WithSignedPath(r *http.Request, escapedPath string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), signedPathKey{}, escapedPath))
}

type decodedPathKey struct{}

// WithDecodedPath marks a request whose path a proxy decoded before it
// reached us (an API Gateway HTTP API): its signed path is Go's escaping of
// the decoded path, and the verifier also tries the SDKs' spellings that
// decode to the same path (auth.Request.PathDecoded).
func WithDecodedPath(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), decodedPathKey{}, true))
}

// call is one request in flight.
type call struct {
	r         *http.Request
	w         http.ResponseWriter
	requestID string
	now       time.Time
	version   string

	account   string
	secondary bool       // addressed at the account's read-only secondary location
	baseURL   string     // scheme://host[/stage][/account], for odata.metadata and Location
	query     url.Values // parsed once; handlers read it, not r.URL
	res       resource
	op        operation.Operation // 0 until the request is resolved
	principal *auth.Principal
	scope     tables.Scope
	xml       bool // the operation speaks XML (errors too)
	// itemsRead is what a query page cost the store (tables.EntityPage.ItemsRead),
	// for the request log; -1 for operations that are not queries.
	itemsRead int
	// body counts the request body read and bytesOut the answer body
	// written, for Options.Observe.
	body     *countingBody
	bytesOut int
	// bodyDeadline is when reading the body must end (Limits.BodyTimeout);
	// zero when it is not bounded here.
	bodyDeadline time.Time
}

// opName is the operation's name for logs and metrics, "" before the
// request is resolved.
func (c *call) opName() string {
	if c.op == 0 {
		return ""
	}
	return c.op.String()
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now() // latency is measured, never injected
	c := &call{r: r, w: w, requestID: h.opts.NewRequestID(), now: h.opts.Now().UTC(), itemsRead: -1}
	c.version = headerValue(r.Header, "X-Ms-Version")
	if c.version == "" {
		c.version = defaultVersion
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.Timeout)
	defer cancel()
	c.r = r.WithContext(ctx)
	h.countBody(c)

	release, err := h.admit(r)
	refused := RefusedRequest
	var resp *response
	if err == nil {
		defer release()
		h.startBodyDeadline(c)
		resp, err = h.serve(c)
		refused = ""
	}
	// An error may come before the body is read: its answer must reach a
	// client still sending (drain.go). A request refused by admission is
	// not drained, which would take the slot it was refused.
	drain := err != nil && refused == "" && h.willDrain(c)
	h.startWriteDeadline(w)
	if err == nil {
		var releaseAnswer func()
		refused = RefusedAnswer
		if releaseAnswer, err = h.admitAnswer(resp); err == nil {
			defer releaseAnswer()
		} else if resp.recycleBody {
			putBodyBuffer(resp.body)
		}
	}
	var status int
	var code apierr.Code
	if err != nil {
		status, code = h.writeError(c, err)
	} else {
		status = h.writeResponse(c, resp)
		if resp.recycleBody {
			putBodyBuffer(resp.body)
		}
	}
	h.observe(c, start, status, code, err, refused)
	switch {
	case h.opts.LogRequests:
		h.logRequest(c, start, status, code)
	case clientCancelled(c.r):
		h.log.Info("request cancelled by the client", "requestId", c.requestID, "account", c.account,
			"operation", c.opName(), "table", c.res.table)
	}
	if drain {
		h.drain(c)
	}
}

// statusClientClosedRequest is nginx's 499: what the request log records for
// a request whose client went away before the answer. The client never sees
// it; whatever was written to the closed connection is lost anyway.
const statusClientClosedRequest = 499

// logRequest writes the one line per request of LogRequests: latency in
// milliseconds, and the Azure error code of every error answer.
func (h *Handler) logRequest(c *call, start time.Time, status int, code apierr.Code) {
	attrs := make([]slog.Attr, 0, 12)
	attrs = append(attrs,
		slog.String("requestId", c.requestID),
		slog.String("account", c.account),
		slog.String("operation", c.opName()),
		slog.String("table", c.res.table),
		slog.String("method", c.r.Method),
	)
	// Who asked, never with what: the scheme, and a bearer token's subject.
	if c.principal != nil {
		attrs = append(attrs, slog.String("auth", c.principal.Scheme().String()))
		if name := c.principal.Name(); name != "" {
			attrs = append(attrs, slog.String("principal", name))
		}
	}
	if clientCancelled(c.r) {
		// What went to the closed connection (often a 500 from the store's
		// context error) is no fault of the server.
		status, code = statusClientClosedRequest, ""
		attrs = append(attrs, slog.Bool("cancelled", true))
	}
	attrs = append(attrs, slog.Int("status", status))
	if code != "" {
		attrs = append(attrs, slog.String("code", string(code)))
	}
	attrs = append(attrs, slog.Float64("ms", float64(time.Since(start).Microseconds())/1000))
	if c.itemsRead >= 0 {
		attrs = append(attrs, slog.Int("itemsRead", c.itemsRead))
	}
	h.log.LogAttrs(c.r.Context(), slog.LevelInfo, "request", attrs...)
}

// clientCancelled reports whether the client went away (it closed the
// connection, or the caller cancelled its context) before the request was
// answered, as opposed to the handler's own timeout.
func clientCancelled(r *http.Request) bool {
	return errors.Is(r.Context().Err(), context.Canceled)
}

// defaultVersion answers requests that name no x-ms-version; it is what the
// Go, JS and Python SDKs send.
const defaultVersion = "2019-02-02"

func (h *Handler) serve(c *call) (*response, error) {
	if err := checkRequestSize(c.r); err != nil {
		return nil, err
	}
	routePath := c.r.URL.Path
	escaped := c.r.URL.EscapedPath()
	signed := wirePath(c.r)
	if v, ok := c.r.Context().Value(signedPathKey{}).(string); ok && v != "" {
		signed = v
	}
	stagePrefix := ""
	if strings.HasSuffix(signed, escaped) {
		stagePrefix = strings.TrimSuffix(signed, escaped)
	}

	account, addressed, rest, pathStyle, secondary := h.splitAccount(c.r.Host, routePath)
	if account == "" {
		return nil, apierr.Newf(apierr.InvalidURI, "The request names no storage account this server knows.")
	}
	c.account = account
	c.secondary = secondary
	scheme := h.scheme(c.r)
	var base string
	if pathStyle {
		base = scheme + "://" + c.r.Host + stagePrefix + "/" + addressed
	} else {
		base = scheme + "://" + c.r.Host + stagePrefix
	}
	c.baseURL = base
	if c.r.Method != http.MethodOptions {
		// Every answer to a cross-origin request carries the matching
		// rule's headers, errors included, so a browser app can read them.
		h.corsActual(c)
	}

	res, err := parseResource(rest)
	if err != nil {
		return nil, err
	}
	c.res = res
	q := c.r.URL.Query()
	c.query = q
	c.xml = q.Get("comp") != "" || q.Get("restype") != ""

	if c.r.Method == http.MethodOptions {
		c.op = operation.Preflight
		return h.preflight(c)
	}
	if err := checkVersion(c); err != nil {
		return nil, err
	}
	op, err := resolveOperation(c.r, res, q)
	if err != nil {
		return nil, err
	}
	c.op = op
	ep := endpoints[op] // resolveOperation never returns Preflight, which has none
	if err := checkFormat(c.r, ep); err != nil {
		return nil, err
	}

	ar := auth.Request{
		Account:    account,
		SignedPath: signed,
		// The flag is the only value stored under its key.
		PathDecoded: c.r.Context().Value(decodedPathKey{}) != nil,
		Query:       q,
		Header:      c.r.Header,
		Method:      c.r.Method,
		Table:       res.table,
		ClientIP:    h.clientIP(c.r),
		HTTPS:       scheme == "https",
		Now:         c.now,
		Endpoint:    base,
	}
	if secondary && pathStyle {
		// Clients sign with the primary account's name and key ("Authorize
		// with Shared Key": secondary access is authorized as the
		// primary). The Go and JS SDKs sign the path as sent
		// (/acct-secondary/...); the Python SDK signs the primary's path
		// before it moves the request to the secondary (/acct/..., sent as
		// /acct-secondary/acct/...); a client may also name the primary in
		// place of the secondary.
		if ep, ok := strings.CutPrefix(escaped, "/"+addressed); ok {
			ar.AltSignedPaths = []string{stagePrefix + "/" + account + ep, stagePrefix + ep}
		}
	}
	p, err := h.verifier.Authenticate(c.r.Context(), ar)
	if err != nil {
		return nil, err
	}
	c.principal = p
	if need := op.Authorization(); need != 0 {
		if err := p.Authorize(need, res.table); err != nil {
			return nil, err
		}
	}
	if secondary && !op.Info().ReadsOnly {
		// A read-access geo-redundant account's secondary is read-only:
		// Azure refuses writes there with 403 ("Write operations are not
		// allowed").
		return nil, apierr.Newf(apierr.InsufficientAccountPermissions,
			"Write operations are not allowed on the secondary location %s%s; write to the primary, %s.", account, secondarySuffix, account)
	}
	c.scope = tables.Scope{Account: account}
	if p.Scheme() == auth.SchemeTableSAS {
		c.scope.EntityAllowed = p.AllowsEntity
		if keys, ok := p.KeyRange(); ok {
			c.scope.Keys = &keys
		}
	}
	return ep.serve(h, c)
}

// wirePath is the path of the request target exactly as the client sent
// it, still percent-encoded: SharedKey signs that spelling and no other.
// An absolute-form target ("http://host/path", as sent to a proxy) keeps
// its path after the authority. Requests built in process without a
// RequestURI fall back to the URL's own escaping.
func wirePath(r *http.Request) string {
	if r.RequestURI == "" {
		return r.URL.EscapedPath()
	}
	path, _, _ := strings.Cut(r.RequestURI, "?")
	if !strings.HasPrefix(path, "/") {
		if _, rest, ok := strings.Cut(path, "://"); ok {
			path = ""
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				path = rest[i:]
			}
		}
	}
	return path
}

// splitAccount finds the account: path-style (the first path segment, the
// emulator convention) or host-style (the first DNS label of the host).
// addressed is that segment or label as sent; secondary reports that it
// names the account's secondary location (resolveAccount).
func (h *Handler) splitAccount(host, p string) (account, addressed, rest string, pathStyle, secondary bool) {
	trimmed := strings.TrimPrefix(p, "/")
	first, _, found := strings.Cut(trimmed, "/")
	if account, secondary, ok := h.resolveAccount(first); ok {
		// rest is "/" and what follows the account segment: a slice of p
		// rather than a new string.
		rest := "/"
		if found {
			rest = trimmed[len(first):]
		}
		if secondary {
			// The Python SDK (azure-data-tables) reaches the secondary of a
			// path-style endpoint by putting /<account>-secondary in front
			// of the primary's path: /acct-secondary/acct/?comp=stats. A
			// nested path means nothing else, so the inner account goes.
			if inner, _, nested := strings.Cut(rest[1:], "/"); nested && strings.EqualFold(inner, account) {
				rest = rest[1+len(inner):]
			}
		}
		return account, first, rest, true, secondary
	}
	hostname := host
	if hn, _, err := net.SplitHostPort(host); err == nil {
		hostname = hn
	}
	if label, _, ok := strings.Cut(hostname, "."); ok {
		if account, secondary, ok := h.resolveAccount(label); ok {
			return account, label, p, false, secondary
		}
	}
	return "", "", "", false, false
}

// secondarySuffix names an account's secondary location: Azure serves a
// read-access geo-redundant account's replica as <account>-secondary
// (host-style), and the storage emulator as /devstoreaccount1-secondary
// (path-style, TableSecondaryEndpoint in its connection string).
const secondarySuffix = "-secondary"

// resolveAccount maps an account segment or host label to a configured
// account, and tells whether it names the account's secondary location.
// It is the one place an account is resolved, for path-style, host-style
// and Lambda requests alike. The account comes back as configured
// (lower-case) whatever the case it was addressed in
// (auth.Verifier.AccountName): /DEVSTOREACCOUNT1/Tables is the Tables of
// devstoreaccount1, never a namespace of its own.
func (h *Handler) resolveAccount(name string) (account string, secondary, ok bool) {
	if name == "" {
		return "", false, false
	}
	if account, ok := h.verifier.AccountName(name); ok {
		return account, false, true
	}
	if n := len(name) - len(secondarySuffix); n > 0 && strings.EqualFold(name[n:], secondarySuffix) {
		if account, ok := h.verifier.AccountName(name[:n]); ok {
			return account, true, true
		}
	}
	return "", false, false
}

func (h *Handler) scheme(r *http.Request) string {
	if h.opts.TrustForwardedHeaders {
		if p := r.Header.Get("X-Forwarded-Proto"); p != "" {
			return strings.ToLower(strings.TrimSpace(strings.Split(p, ",")[0]))
		}
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

func (h *Handler) clientIP(r *http.Request) netip.Addr {
	if h.opts.TrustForwardedHeaders {
		if f := r.Header.Get("X-Forwarded-For"); f != "" {
			if a, err := netip.ParseAddr(strings.TrimSpace(strings.Split(f, ",")[0])); err == nil {
				return a.Unmap()
			}
		}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	if a, err := netip.ParseAddr(r.RemoteAddr); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}
