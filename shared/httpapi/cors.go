package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// CORS follows "CORS support for the Azure Storage services": rules are
// evaluated in order and the first that allows the origin, the method and
// every requested header wins. A preflight no rule allows is a 403; an
// actual request no rule allows is served without CORS headers.

// corsCacheTTL bounds how stale a server's view of an account's CORS rules
// can be. Azure documents that rule changes may take up to 30 s to apply.
const corsCacheTTL = 5 * time.Second

type corsCache struct {
	mu      sync.Mutex
	entries map[string]corsEntry
}

type corsEntry struct {
	rules   []corsRule
	fetched time.Time
}

func (cc *corsCache) invalidate(account string) {
	cc.mu.Lock()
	delete(cc.entries, account)
	cc.mu.Unlock()
}

func (h *Handler) corsRules(ctx context.Context, account string, now time.Time) ([]corsRule, error) {
	h.cors.mu.Lock()
	e, ok := h.cors.entries[account]
	h.cors.mu.Unlock()
	if ok && now.Sub(e.fetched) < corsCacheTTL && now.Sub(e.fetched) >= 0 {
		return e.rules, nil
	}
	doc, err := h.svc.ServiceProperties(ctx, tables.Scope{Account: account})
	if err != nil {
		return nil, err
	}
	var rules []corsRule
	if doc != nil {
		p, err := parseServiceProperties(doc)
		if err != nil {
			return nil, apierr.Wrap(apierr.InternalError, err)
		}
		if p.Cors != nil {
			rules = p.Cors.Rules
		}
	}
	h.cors.mu.Lock()
	if h.cors.entries == nil {
		h.cors.entries = make(map[string]corsEntry)
	}
	h.cors.entries[account] = corsEntry{rules: rules, fetched: now}
	h.cors.mu.Unlock()
	return rules, nil
}

// matchCORS returns the first rule allowing origin, method and headers.
func matchCORS(rules []corsRule, origin, method string, headers []string) (corsRule, bool) {
	for _, r := range rules {
		if !listHas(r.AllowedOrigins, origin, false) || !listHas(r.AllowedMethods, method, false) {
			continue
		}
		ok := true
		for _, hd := range headers {
			if !listHas(r.AllowedHeaders, hd, true) {
				ok = false
				break
			}
		}
		if ok {
			return r, true
		}
	}
	return corsRule{}, false
}

// listHas reports whether a comma-separated rule list allows v: "*" allows
// anything; with prefixes, "x-ms-meta*" allows every header it prefixes.
// Everything compares case-insensitively: origins' schemes and hosts and
// header names are case-insensitive, and a rule's methods are validated as
// upper-case names when they are set.
func listHas(list, v string, prefixes bool) bool {
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "*":
			return true
		case prefixes && strings.HasSuffix(item, "*"):
			p := item[:len(item)-1]
			if len(v) >= len(p) && strings.EqualFold(v[:len(p)], p) {
				return true
			}
		case strings.EqualFold(item, v):
			return true
		}
	}
	return false
}

func allowsAnyOrigin(r corsRule) bool {
	for _, o := range splitList(r.AllowedOrigins) {
		if o == "*" {
			return true
		}
	}
	return false
}

// preflight answers OPTIONS ("Preflight Table Request"). It needs no
// authorization: CORS is not an authorization mechanism.
func (h *Handler) preflight(c *call) (*response, error) {
	origin := c.r.Header.Get("Origin")
	method := c.r.Header.Get("Access-Control-Request-Method")
	if origin == "" || method == "" {
		return nil, apierr.Newf(apierr.InvalidHeaderValue, "A preflight request needs Origin and Access-Control-Request-Method.")
	}
	var headers []string
	for _, v := range c.r.Header.Values("Access-Control-Request-Headers") {
		headers = append(headers, splitList(v)...)
	}
	rules, err := h.corsRules(c.r.Context(), c.account, c.now)
	if err != nil {
		return nil, err
	}
	rule, ok := matchCORS(rules, origin, method, headers)
	if !ok {
		return nil, apierr.New(apierr.CORSPreflightFailure)
	}
	hd := http.Header{
		"Access-Control-Allow-Methods": {method},
		"Access-Control-Max-Age":       {strconv.Itoa(rule.MaxAgeInSeconds)},
	}
	setAllowOrigin(hd, rule, origin)
	if len(headers) > 0 {
		hd["Access-Control-Allow-Headers"] = []string{strings.Join(headers, ",")}
	}
	return &response{status: http.StatusOK, header: hd}, nil
}

// setAllowOrigin answers "*" for a rule open to all origins, and otherwise
// echoes the origin with credentials allowed and Vary: Origin, as Azure does.
func setAllowOrigin(hd http.Header, rule corsRule, origin string) {
	if allowsAnyOrigin(rule) {
		hd["Access-Control-Allow-Origin"] = []string{"*"}
		return
	}
	hd["Access-Control-Allow-Origin"] = []string{origin}
	hd["Access-Control-Allow-Credentials"] = []string{"true"}
	hd["Vary"] = []string{"Origin"}
}

// corsActual adds the matching rule's headers to a cross-origin request's
// response, errors included, so a browser app can read both.
//
// "Understanding the use of the Vary header" (CORS support for the Azure
// Storage services): once an account has CORS rules, the answer to a GET or
// HEAD depends on the Origin header, so Azure sends Vary: Origin on every
// GET and HEAD, with or without an Origin and whether a rule matches or
// not, except when the matching rule allows every origin ("*"), whose
// answer is the same for all. Other methods are not cached by browsers and
// carry Vary only with an origin-specific match (setAllowOrigin).
func (h *Handler) corsActual(c *call) {
	origin := c.r.Header.Get("Origin")
	method, tunnelErr := operation.EffectiveMethod(c.r.Method, c.r.Header)
	if tunnelErr != nil {
		method = c.r.Method
	}
	cacheable := method == http.MethodGet || method == http.MethodHead
	if origin == "" && !cacheable {
		return
	}
	rules, err := h.corsRules(c.r.Context(), c.account, c.now)
	if err != nil || len(rules) == 0 {
		return
	}
	hd := c.w.Header()
	rule, ok := matchCORS(rules, origin, method, nil)
	if origin == "" || !ok {
		if cacheable {
			hd["Vary"] = []string{"Origin"}
		}
		return
	}
	setAllowOrigin(hd, rule, origin)
	if rule.ExposedHeaders != "" {
		hd["Access-Control-Expose-Headers"] = []string{rule.ExposedHeaders}
	}
}
