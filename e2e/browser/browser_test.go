package browser_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// TestBrowserSDK loads a page using @azure/data-tables into headless
// Chromium. The page, served from its own origin, inserts, reads, batches
// and queries entities on a real `tablebridge serve` process on another
// origin; then the Go SDK checks what the browser wrote.
func TestBrowserSDK(t *testing.T) {
	t.Parallel()
	tl := findTools(t)
	work := t.TempDir()

	// Bundle the page while the server binary builds: both are the slow
	// part of the test.
	var wg sync.WaitGroup
	var bundleErr error
	bundle := filepath.Join(work, "page.js")
	wg.Add(1)
	go func() {
		defer wg.Done()
		bundleErr = run(t, tl.pageDir, 60*time.Second, tl.node, "build.mjs", bundle)
	}()
	defer wg.Wait() // before t.TempDir goes, should the build fail the test
	serveproc.Binary(t)
	wg.Wait()
	if bundleErr != nil {
		t.Fatalf("bundle the page: %v", bundleErr)
	}

	srv := serveproc.Start(t, "pebble")
	page := servePage(t, filepath.Join(tl.pageDir, "index.html"), bundle)

	// The account owner prepares what a browser app cannot do itself: the
	// table, the CORS rule for the page's origin and a table SAS.
	sc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString, &aztables.ClientOptions{
		ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	// Headers listed one by one (plus the x-ms- prefix), so the preflight
	// really has to match them; "*" exposes every response header (the
	// SDK reads the ETag, and the page reads x-ms-error-code).
	setCORS := func(t *testing.T, origin string) {
		t.Helper()
		if _, err := sc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{{
			AllowedOrigins:  to.Ptr(origin),
			AllowedMethods:  to.Ptr("GET,POST,PUT,PATCH,MERGE,DELETE"),
			AllowedHeaders:  to.Ptr("x-ms-*,content-type,accept,dataserviceversion,maxdataserviceversion,prefer,if-match"),
			ExposedHeaders:  to.Ptr("*"),
			MaxAgeInSeconds: to.Ptr(int32(60)),
		}}}, nil); err != nil {
			t.Fatalf("set the CORS rule: %v", err)
		}
	}
	load := func(t *testing.T, table string) string {
		t.Helper()
		if _, err := sc.CreateTable(ctx, table, nil); err != nil {
			t.Fatalf("create table: %v", err)
		}
		sas, err := auth.NewTableSAS(auth.DevStoreAccountName, auth.DevStoreAccount().Keys[0], auth.TableSASValues{
			Table: table, Permissions: "raud", Start: time.Now().Add(-5 * time.Minute), Expiry: time.Now().Add(time.Hour),
			Protocol: "https,http",
		})
		if err != nil {
			t.Fatal(err)
		}
		q := url.Values{"endpoint": {srv.AccountURL}, "table": {table}, "sas": {sas.Encode()}}
		dom := runChromium(t, tl.chromium, page+"/index.html?"+q.Encode())
		m := regexp.MustCompile(`(?s)<pre id="result">(.*?)</pre>`).FindStringSubmatch(dom)
		if m == nil {
			t.Fatalf("no #result in the DOM:\n%s", tail(dom, 2000))
		}
		result := html.UnescapeString(m[1])
		t.Logf("page: %s", result)
		return result
	}

	// Control: with a rule for another origin the browser itself must
	// refuse (the preflight fails), so the page fails and writes nothing.
	// Without this, a PASS below could not tell CORS was exercised.
	setCORS(t, "http://elsewhere.example")
	if result := load(t, "browserdenied"); !strings.HasPrefix(result, "FAIL ") {
		t.Errorf("with a CORS rule for another origin the page reports %q, want FAIL", result)
	}
	_, err = sc.NewClient("browserdenied").GetEntity(ctx, "browser", "r1", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Errorf("entity written without a CORS rule for the page: %v, want 404", err)
	}

	const table = "browsertest"
	setCORS(t, page)
	result := load(t, table)
	summaryJSON, ok := strings.CutPrefix(result, "PASS ")
	if !ok {
		t.Fatalf("the page reports: %s", result)
	}
	var summary struct {
		Greeting     string
		Count        int
		Big          string
		Listed       []string
		Refused      string
		BatchRefused string
	}
	if err := json.Unmarshal([]byte(summaryJSON), &summary); err != nil {
		t.Fatalf("PASS summary %q: %v", summaryJSON, err)
	}
	if summary.Greeting != "hello from chromium" || summary.Count != 42 || summary.Big != "9007199254740993" ||
		strings.Join(summary.Listed, ",") != "r1:hello from chromium:43,r2:batched:" || summary.Refused != "409 EntityAlreadyExists" ||
		!strings.HasPrefix(summary.BatchRefused, "409 EntityAlreadyExists 1:") {
		t.Errorf("page summary %+v is not what the page should have seen", summary)
	}

	// What the browser wrote is in the store, typed as the page sent it.
	c := sc.NewClient(table)
	resp, err := c.GetEntity(ctx, "browser", "r1", nil)
	if err != nil {
		t.Fatalf("read the browser's entity: %v", err)
	}
	var e aztables.EDMEntity
	if err := json.Unmarshal(resp.Value, &e); err != nil {
		t.Fatal(err)
	}
	if e.Properties["Greeting"] != "hello from chromium" || e.Properties["Count"] != int32(43) ||
		e.Properties["Big"] != aztables.EDMInt64(9007199254740993) {
		t.Errorf("stored entity %#v", e.Properties)
	}
	if when, ok := e.Properties["When"].(aztables.EDMDateTime); !ok || !time.Time(when).Equal(time.Date(2024, 5, 6, 7, 8, 9, 123e6, time.UTC)) {
		t.Errorf("stored When %#v, want Edm.DateTime 2024-05-06T07:08:09.123Z", e.Properties["When"])
	}
	if _, err := c.GetEntity(ctx, "browser", "r2", nil); err != nil {
		t.Errorf("the browser's batched entity: %v", err)
	}
	// The failed transaction left nothing behind.
	_, err = c.GetEntity(ctx, "browser", "r3", nil)
	if !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
		t.Errorf("entity r3 of the failed transaction: %v, want 404", err)
	}
}

// run runs a command in dir and returns its combined output in the error.
func run(t *testing.T, dir string, timeout time.Duration, name string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// servePage serves the page and its bundle from their own loopback
// origin and returns it ("http://127.0.0.1:PORT").
func servePage(t *testing.T, indexHTML, bundle string) string {
	t.Helper()
	files := map[string]string{"/index.html": indexHTML, "/page.js": bundle}
	types := map[string]string{"/index.html": "text/html; charset=utf-8", "/page.js": "text/javascript; charset=utf-8"}
	// Read from disk per request rather than http.ServeFile, which
	// redirects ".../index.html" to the directory.
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", types[r.URL.Path])
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// runChromium loads pageURL in headless Chromium and returns the DOM after
// the page settled. --virtual-time-budget lets the page's requests finish
// before --dump-dom prints (virtual time does not advance while network
// requests are pending).
func runChromium(t *testing.T, chromium, pageURL string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=15000", "--dump-dom", pageURL)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	defer func() { t.Logf("chromium ran %v", time.Since(start).Round(time.Millisecond)) }()
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\nstderr:\n%s", err, tail(stderr.String(), 3000))
	}
	return stdout.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
