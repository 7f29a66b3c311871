package databrowser

import (
	"embed"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// Prefix is the path the page is served under. It cannot name an account:
// account names are 3 to 24 lowercase letters and digits.
const Prefix = "/_browser/"

// Validity is how long the SAS of a printed link lasts.
const Validity = 30 * 24 * time.Hour

//go:embed static
var static embed.FS

// Handler serves the page's files under Prefix. The headers keep the page
// from being framed (clickjacking its buttons) and allow only its own
// scripts and styles, so that nothing a table holds can run as script even
// if it escaped the page's text-only rendering.
func Handler() http.Handler {
	files := http.FileServerFS(static)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		// /_browser/x is the embedded static/x.
		u := *r.URL
		u.Path, u.RawPath = "/static/"+strings.TrimPrefix(r.URL.Path, Prefix), ""
		r2 := *r
		r2.URL = &u
		files.ServeHTTP(w, &r2)
	})
}

// Mount serves the page under Prefix and everything else with api.
func Mount(api http.Handler) http.Handler {
	page := Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == strings.TrimSuffix(Prefix, "/") {
			http.Redirect(w, r, Prefix, http.StatusMovedPermanently)
			return
		}
		if strings.HasPrefix(r.URL.Path, Prefix) {
			page.ServeHTTP(w, r)
			return
		}
		api.ServeHTTP(w, r)
	})
}

// Link returns the page's URL on the server at base ("http://host:port")
// with an account SAS per account in its fragment, valid from now for
// Validity. Over HTTPS the tokens allow HTTPS only.
func Link(base string, accounts []auth.Account, now time.Time) (string, error) {
	frag := url.Values{}
	for _, acc := range accounts {
		if len(acc.Keys) == 0 {
			continue // an account without a key (bearer tokens only) signs no SAS
		}
		v := auth.AccountSASValues{
			ResourceTypes: "sco",
			Permissions:   "rwdlacu",
			// A few minutes back, for a browser whose clock is behind.
			Start:  now.Add(-5 * time.Minute),
			Expiry: now.Add(Validity),
		}
		if strings.HasPrefix(base, "https:") {
			v.Protocol = "https"
		}
		sas, err := auth.NewAccountSAS(acc.Name, acc.Keys[0], v)
		if err != nil {
			return "", err
		}
		frag.Set(acc.Name, sas.Encode())
	}
	return base + Prefix + "#" + frag.Encode(), nil
}
