package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

// observedHandler is the handler over a fresh bolt store with limits,
// collecting what Options.Observe receives.
func observedHandler(t *testing.T, limits httpapi.Limits) (*httpapi.Handler, func() []httpapi.RequestStats) {
	t.Helper()
	st, err := boltstore.Open(filepath.Join(t.TempDir(), "tablebridge.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var mu sync.Mutex
	var seen []httpapi.RequestStats
	h, err := httpapi.NewHandler(newService(t, st), []auth.Account{auth.DevStoreAccount()}, httpapi.Options{
		Limits: limits,
		Observe: func(s httpapi.RequestStats) {
			mu.Lock()
			seen = append(seen, s)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, func() []httpapi.RequestStats {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
}

// TestObserve: every answer, errors and refusals included, reaches
// Options.Observe once, with its operation, account, status, error code and
// the body bytes read and written.
func TestObserve(t *testing.T) {
	t.Parallel()
	key := auth.DevStoreAccount().Keys[0]
	send := func(t *testing.T, h http.Handler, method, path, body string, key []byte) *httptest.ResponseRecorder {
		t.Helper()
		r := signedRequest(t, t.Context(), method, path, key)
		if body != "" {
			r.Body = io.NopCloser(strings.NewReader(body))
			r.ContentLength = int64(len(body))
			r.Header.Set("Content-Type", "application/json")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	one := func(t *testing.T, got []httpapi.RequestStats) httpapi.RequestStats {
		t.Helper()
		if len(got) != 1 {
			t.Fatalf("observed %d requests, want 1: %+v", len(got), got)
		}
		if got[0].Duration <= 0 {
			t.Errorf("duration %v, want > 0", got[0].Duration)
		}
		return got[0]
	}

	t.Run("success", func(t *testing.T) {
		h, seen := observedHandler(t, httpapi.Limits{})
		body := `{"TableName":"observed"}`
		w := send(t, h, http.MethodPost, "/Tables", body, key)
		if w.Code != http.StatusCreated {
			t.Fatalf("create table: %d %s", w.Code, w.Body)
		}
		s := one(t, seen())
		want := httpapi.RequestStats{Operation: "CreateTable", Account: auth.DevStoreAccountName, Status: http.StatusCreated,
			BytesIn: int64(len(body)), BytesOut: int64(w.Body.Len()), Duration: s.Duration}
		if s != want {
			t.Errorf("observed %+v, want %+v", s, want)
		}
	})
	t.Run("authentication failure", func(t *testing.T) {
		h, seen := observedHandler(t, httpapi.Limits{})
		w := send(t, h, http.MethodGet, "/Tables", "", bytes.Repeat([]byte{7}, len(key)))
		s := one(t, seen())
		if s.Status != http.StatusForbidden || s.Code != apierr.AuthenticationFailed || s.Operation != "QueryTables" ||
			s.BytesOut != int64(w.Body.Len()) || s.Refused != "" {
			t.Errorf("observed %+v", s)
		}
	})
	t.Run("unknown account", func(t *testing.T) {
		h, seen := observedHandler(t, httpapi.Limits{})
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:10002/nosuchaccount/Tables", nil)
		h.ServeHTTP(httptest.NewRecorder(), r)
		s := one(t, seen())
		if s.Account != "" || s.Operation != "" || s.Status != http.StatusBadRequest || s.Code != apierr.InvalidURI {
			t.Errorf("observed %+v", s)
		}
	})
	t.Run("refused by admission", func(t *testing.T) {
		// A body larger than the in-flight bound is refused at once, before
		// a byte of it is read.
		h, seen := observedHandler(t, httpapi.Limits{MaxBodyBytes: 10})
		w := send(t, h, http.MethodPost, "/Tables", `{"TableName":"refused"}`, key)
		if w.Code != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", w.Code)
		}
		s := one(t, seen())
		if s.Refused != httpapi.RefusedRequest || s.Status != http.StatusServiceUnavailable || s.Code != apierr.ServerBusy || s.BytesIn != 0 {
			t.Errorf("observed %+v", s)
		}
	})
}
