package protocoltest

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

var validTableName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)

func TestTableName(t *testing.T) {
	t.Parallel()
	seen := map[string]string{}
	for _, name := range []string{"", "a", "A/b_1", "Ab1", "ab1", strings.Repeat("x", 200), strings.Repeat("x", 199) + "y", "日本語", "1leading"} {
		t.Run(name, func(t *testing.T) {
			for _, suffix := range []string{"", "s", "S"} {
				got := TableName(t, suffix)
				if !validTableName.MatchString(got) || len(got) > 55 {
					t.Errorf("TableName(%q, %q) = %q: not a valid table name of at most 55 characters", t.Name(), suffix, got)
				}
				if got != TableName(t, suffix) {
					t.Errorf("TableName(%q, %q) is not deterministic", t.Name(), suffix)
				}
				// Table names are case-insensitive, so uniqueness is too.
				key := strings.ToLower(got)
				if prev, dup := seen[key]; dup {
					t.Errorf("TableName(%q, %q) = %q collides with %s", t.Name(), suffix, got, prev)
				}
				seen[key] = t.Name() + "+" + suffix
			}
		})
	}
}

func TestServer(t *testing.T) {
	t.Parallel()
	second := auth.Account{Name: "otheracct", Keys: [][]byte{[]byte("key-one"), []byte("key-two")}}
	// A frozen clock near the real one: the SDK dates its requests with
	// the real clock, and the verifier allows 15 minutes either way.
	fixed := time.Now().UTC().Truncate(time.Second).Add(-time.Minute)
	srv := New(t, tablebridgetest.WithAccounts(second), tablebridgetest.WithNow(func() time.Time { return fixed }))

	t.Run("ConnectionString", func(t *testing.T) {
		want := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + auth.DevStoreAccountKey +
			";TableEndpoint=" + srv.URL + "/devstoreaccount1;"
		if got := srv.ConnectionString(); got != want {
			t.Errorf("ConnectionString() = %q, want %q", got, want)
		}
		if !strings.HasPrefix(srv.URL, "http://127.0.0.1:") {
			t.Errorf("URL %q is not loopback", srv.URL)
		}
	})

	t.Run("Client", func(t *testing.T) {
		sc := srv.Client()
		name := TableName(t, "")
		if _, err := sc.CreateTable(ctxFor(t), name, nil); err != nil {
			t.Fatal(err)
		}
		if got := listTables(t, sc, nil); len(got) != 1 || got[0] != name {
			t.Errorf("tables %q, want [%s]", got, name)
		}
	})

	t.Run("DoUsesTheInjectedClock", func(t *testing.T) {
		// Do dates its request by the server's clock, the clock the
		// verifier checks against; the response is dated by it too.
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /Tables: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		if got := resp.Header.Get("Date"); got != fixed.Format(http.TimeFormat) {
			t.Errorf("Date %q, want %q", got, fixed.Format(http.TimeFormat))
		}
	})

	t.Run("DoSignsForEveryAccountAndKey", func(t *testing.T) {
		for _, key := range second.Keys {
			for _, s := range []Signing{SharedKeyLite, SharedKey} {
				resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables", Account: second.Name, Key: key, Signing: s})
				if resp.StatusCode != http.StatusOK {
					t.Errorf("key %q, signing %d: %d %s", key, s, resp.StatusCode, truncate(resp.Body))
				}
			}
		}
	})

	t.Run("HeaderWithoutValuesRemovesTheDefault", func(t *testing.T) {
		req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodGet, Path: "/Tables", Header: http.Header{"Accept": nil}, Signing: Unsigned})
		if _, ok := req.Header["Accept"]; ok {
			t.Errorf("Accept %q was not removed", req.Header.Get("Accept"))
		}
	})
}
