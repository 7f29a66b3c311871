package migrate_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// throttlingProxy sits in front of a server and throttles like Azure does
// under load: some requests get 503 ServerBusy (or Cosmos DB's 429), and
// some transactions get a 202 whose operation failed with 503 ServerBusy,
// which only the engine's own retry can see.
type throttlingProxy struct {
	*httptest.Server
	requests, throttled, innerThrottled atomic.Int64
}

const innerServerBusy = "--batchresponse_x\r\nContent-Type: multipart/mixed; boundary=changesetresponse_x\r\n\r\n" +
	"--changesetresponse_x\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
	"HTTP/1.1 503 Server Busy\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\nDataServiceVersion: 3.0;\r\n\r\n" +
	`{"odata.error":{"code":"ServerBusy","message":{"lang":"en-US","value":"0:The server is busy."}}}` + "\r\n" +
	"--changesetresponse_x--\r\n--batchresponse_x--\r\n"

func newThrottlingProxy(t *testing.T, target *protocoltest.Server) *throttlingProxy {
	t.Helper()
	u, err := url.Parse(target.URL)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	p := &throttlingProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := p.requests.Add(1)
		batch := strings.HasSuffix(r.URL.Path, "/$batch")
		switch {
		case n%4 == 0:
			p.throttled.Add(1)
			code, status := "ServerBusy", http.StatusServiceUnavailable
			if n%8 == 0 {
				code, status = "TooManyRequests", http.StatusTooManyRequests
			}
			w.Header().Set("x-ms-error-code", code)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"odata.error":{"code":%q,"message":{"lang":"en-US","value":"busy"}}}`, code)
		case batch && n%5 == 0:
			p.innerThrottled.Add(1)
			w.Header().Set("Content-Type", "multipart/mixed; boundary=batchresponse_x")
			w.WriteHeader(http.StatusAccepted)
			fmt.Fprint(w, innerServerBusy)
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *throttlingProxy) connectionString() string {
	return "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + auth.DevStoreAccountKey + ";TableEndpoint=" + p.URL + "/devstoreaccount1;"
}

func TestMigrateThroughThrottling(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	want := bulkEntities(2000, 40)
	seed(t, src.Store, "Orders", want)
	dst := protocoltest.New(t)
	srcProxy, dstProxy := newThrottlingProxy(t, src), newThrottlingProxy(t, dst)
	opts := migrate.Options{
		Source:   openEndpoint(t, srcProxy.connectionString()),
		Dest:     openEndpoint(t, dstProxy.connectionString()),
		PageSize: 250,
		Backoff:  fastBackoff,
	}
	if _, err := migrate.Migrate(ctxFor(t), opts); err != nil {
		t.Fatal(err)
	}
	assertSameEntities(t, "Orders", want, readAll(t, dst.Store, "Orders"))
	if srcProxy.throttled.Load() == 0 || dstProxy.throttled.Load() == 0 || dstProxy.innerThrottled.Load() == 0 {
		t.Fatalf("the proxies throttled %d source, %d destination and %d transaction requests; the test wants all three",
			srcProxy.throttled.Load(), dstProxy.throttled.Load(), dstProxy.innerThrottled.Load())
	}
	verifyClean(t, migrate.VerifyOptions{Source: opts.Source, Dest: openEndpoint(t, dstProxy.connectionString()), Backoff: fastBackoff})
}
