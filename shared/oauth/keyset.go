package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// keySet is an issuer's JWKS for go-oidc's verifier. go-oidc's own
// RemoteKeySet fetches the JWKS again after every failed verification, so
// anyone can make the server fetch an issuer's keys once per request by
// sending forged tokens, and get the server throttled by the issuer. This
// one fetches again only for a key id it does not hold, and at most once
// per refresh interval; a token whose key id it holds but whose signature
// does not verify is refused without a fetch. Verification itself is
// go-jose's.
type keySet struct {
	url     string
	client  *http.Client
	refresh time.Duration
	now     func() time.Time

	mu        sync.RWMutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time // of the last successful fetch
	failedAt  time.Time
	failure   error // of the last fetch, when it failed

	fetchMu sync.Mutex // one fetch at a time
}

// maxJWKS bounds a key set document; real ones are a few KiB.
const maxJWKS = 1 << 20

var errUnknownKey = errors.New("oauth: the token's key id is not among the issuer's keys")

// VerifySignature implements oidc.KeySet.
func (ks *keySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	jws, err := jose.ParseSignedCompact(raw, []jose.SignatureAlgorithm{jose.RS256, jose.ES256})
	if err != nil {
		return nil, err
	}
	if len(jws.Signatures) != 1 {
		return nil, errors.New("oauth: a token has exactly one signature")
	}
	kid := jws.Signatures[0].Header.KeyID
	payload, held, err := ks.verifyHeld(jws, kid)
	if held || err == nil {
		return payload, err
	}
	if err := ks.fetchWithin(ctx); err != nil {
		return nil, err
	}
	payload, _, err = ks.verifyHeld(jws, kid)
	return payload, err
}

// verifyHeld verifies with the held keys of kid (every held key when the
// token names none) and reports whether any such key was held.
func (ks *keySet) verifyHeld(jws *jose.JSONWebSignature, kid string) (payload []byte, held bool, err error) {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	for i := range ks.keys {
		k := &ks.keys[i]
		if kid != "" && k.KeyID != kid {
			continue
		}
		held = true
		if p, err := jws.Verify(k); err == nil {
			return p, true, nil
		}
	}
	if held {
		return nil, true, errors.New("oauth: the signature does not verify with the issuer's key")
	}
	return nil, false, errUnknownKey
}

// fetchWithin runs fetch but waits for it no longer than ctx allows: the
// download has its own 10 s bound and goes on without the request (its
// keys serve the requests after), while the request still answers within
// its deadline (on Lambda, before API Gateway's 29 s; see lambdafn's
// requestDeadline).
func (ks *keySet) fetchWithin(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- ks.fetch(context.WithoutCancel(ctx)) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fetch gets the key set again unless one was fetched within the refresh
// interval (then the token's key is unknown, and stays so until later). A
// failed fetch keeps the keys held and is not tried again for
// rediscoverAfter, so a down issuer is not asked once per request.
func (ks *keySet) fetch(ctx context.Context) error {
	ks.fetchMu.Lock()
	defer ks.fetchMu.Unlock()
	ks.mu.RLock()
	last, failedAt, failure := ks.fetchedAt, ks.failedAt, ks.failure
	ks.mu.RUnlock()
	now := ks.now()
	if !last.IsZero() && now.Sub(last) < ks.refresh {
		return errUnknownKey
	}
	if failure != nil && now.Sub(failedAt) < rediscoverAfter {
		return failure
	}
	keys, err := ks.download(ctx)
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if err != nil {
		ks.failedAt, ks.failure = now, err
		return err
	}
	ks.keys, ks.fetchedAt, ks.failure = keys, now, nil
	return nil
}

func (ks *keySet) download(ctx context.Context) ([]jose.JSONWebKey, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := ks.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("oauth: fetch keys %s: %w", ks.url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKS+1))
	if err != nil {
		return nil, fmt.Errorf("oauth: fetch keys %s: %w", ks.url, err)
	}
	if resp.StatusCode != http.StatusOK || len(body) > maxJWKS {
		return nil, fmt.Errorf("oauth: fetch keys %s: %s", ks.url, resp.Status)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fmt.Errorf("oauth: keys %s: %w", ks.url, err)
	}
	var keys []jose.JSONWebKey
	for _, k := range set.Keys {
		if k.Use == "" || k.Use == "sig" {
			keys = append(keys, k)
		}
	}
	return keys, nil
}
