package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/tablebridge/tablebridge/internal/testissuer"
)

// TestKeySetFetches counts the key set fetches against a loopback issuer,
// on a clock the test moves: held keys cost none, unknown key ids at most
// one per refresh interval, a rotation is picked up, and a failed fetch
// keeps the keys held and is tried again only after rediscoverAfter.
func TestKeySetFetches(t *testing.T) {
	t.Parallel()
	const refresh = 10 * time.Second
	held := testissuer.NewKey(t, jose.RS256)
	iss := testissuer.New(t, held)
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ks := &keySet{url: iss.URL + "/keys", client: &http.Client{}, refresh: refresh, now: func() time.Time { return clock }}
	token := func(k *testissuer.Key) string { return iss.Token(t, k, testissuer.Claims{"oid": "u"}) }
	verifies := func(k *testissuer.Key, want bool) {
		t.Helper()
		if _, err := ks.VerifySignature(t.Context(), token(k)); (err == nil) != want {
			t.Fatalf("token of %s: err %v, want verified %v", k.ID, err, want)
		}
	}
	wantFetches := func(want int64) {
		t.Helper()
		if got := iss.JWKSFetches(); got != want {
			t.Fatalf("%d key set fetches, want %d", got, want)
		}
	}

	if err := ks.fetch(t.Context()); err != nil {
		t.Fatal(err)
	}
	wantFetches(1)
	forged := testissuer.NewKey(t, jose.RS256)
	forged.ID = held.ID
	for range 3 {
		verifies(held, true)
		verifies(forged, false)
	}
	wantFetches(1)
	// Within the refresh interval, unknown key ids fetch nothing.
	for range 5 {
		verifies(testissuer.NewKey(t, jose.ES256), false)
	}
	wantFetches(1)
	// After it, one fetch for any number of them.
	clock = clock.Add(refresh)
	for range 5 {
		verifies(testissuer.NewKey(t, jose.ES256), false)
	}
	wantFetches(2)

	// A rotation: the first token of the new key fetches the keys.
	rotated := testissuer.NewKey(t, jose.ES256)
	iss.SetKeys(rotated)
	clock = clock.Add(refresh)
	verifies(rotated, true)
	wantFetches(3)
	verifies(held, false)
	wantFetches(3)

	// A failed fetch keeps the keys held, does not count as a fetch for
	// the refresh interval, and is tried again after rediscoverAfter.
	for _, fault := range []testissuer.Fault{testissuer.ServerError, testissuer.BadJSON} {
		iss.SetKeysFault(fault)
		clock = clock.Add(refresh)
		before := iss.JWKSFetches()
		verifies(testissuer.NewKey(t, jose.ES256), false)
		verifies(testissuer.NewKey(t, jose.ES256), false)
		wantFetches(before + 1)
		verifies(rotated, true)
		clock = clock.Add(rediscoverAfter)
		verifies(testissuer.NewKey(t, jose.ES256), false)
		wantFetches(before + 2)
	}
	iss.SetKeysFault(testissuer.Healthy)
	next := testissuer.NewKey(t, jose.RS256)
	iss.SetKeys(rotated, next)
	clock = clock.Add(rediscoverAfter)
	verifies(next, true)
	verifies(rotated, true)
}

// TestKeySetFetchHonoursTheDeadline: a request whose deadline passes while
// the issuer's keys are being downloaded returns then, with the context's
// error, instead of waiting out the download's own 10 s; the download goes
// on and its keys serve the next request without another fetch.
func TestKeySetFetchHonoursTheDeadline(t *testing.T) {
	t.Parallel()
	key := testissuer.NewKey(t, jose.RS256)
	iss := testissuer.New(t, key)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unblock)
	var fetches atomic.Int64
	arrived := make(chan struct{}, 1)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		arrived <- struct{}{}
		<-release
		resp, err := http.Get(iss.URL + "/keys")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(slow.Close)
	ks := &keySet{url: slow.URL, client: &http.Client{}, refresh: time.Minute, now: time.Now}
	token := iss.Token(t, key, testissuer.Claims{"oid": "u"})

	// The request's time runs out once the download is under way.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		<-arrived
		cancel()
	}()
	if _, err := ks.VerifySignature(ctx, token); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want the request's context error", err)
	}
	unblock()
	// The detached download completes and fills the key set. The bound is
	// the download's own 10 s: only a hang guard, so a broken download
	// fails here rather than at go test's timeout.
	for giveUp := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		ks.mu.RLock()
		fetched := !ks.fetchedAt.IsZero()
		ks.mu.RUnlock()
		if fetched {
			break
		}
		if time.Now().After(giveUp) {
			t.Fatal("the detached download never filled the key set")
		}
	}
	if _, err := ks.VerifySignature(t.Context(), token); err != nil {
		t.Fatalf("after the download: %v", err)
	}
	if got := fetches.Load(); got != 1 {
		t.Errorf("%d fetches, want 1", got)
	}
}
