package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// earlyServer is a `tablebridge serve` with the default limits, over
// HTTP or HTTPS, and one table, "early".
type earlyServer struct {
	endpoint string // scheme://127.0.0.1:port/devstoreaccount1
	host     string // 127.0.0.1:port
	tls      *tls.Config
}

func startEarlyServe(t *testing.T, https bool) *earlyServer {
	t.Helper()
	dir := t.TempDir()
	cfg := serveConfig{listen: "127.0.0.1:0", dataDir: dir, storeKind: "bolt", accounts: auth.AccountList{auth.DevStoreAccount()}}
	if https {
		cfg.tls = tlsFlags{selfSigned: true}
	}
	ctx, stop := context.WithCancel(context.Background())
	connStr, done := startServeConfig(t, ctx, cfg)
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	s := &earlyServer{endpoint: regexp.MustCompile(`TableEndpoint=([^;]+)`).FindStringSubmatch(connStr)[1]}
	u, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(s.endpoint, "http://"), "https://"), "/")
	s.host = u
	var transport policy.Transporter = http.DefaultClient
	if https {
		pem, err := os.ReadFile(filepath.Join(dir, "tls", "cert.pem"))
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		s.tls = &tls.Config{RootCAs: pool}
		transport = s.client(false)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Transport: transport}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "early", nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// client is an HTTP client of the server; over HTTPS it speaks HTTP/2 when
// h2 is set, HTTP/1.1 otherwise.
func (s *earlyServer) client(h2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: s.tls.Clone(), ForceAttemptHTTP2: h2}
	if !h2 {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// signed is a SharedKeyLite-signed request of the account; SharedKeyLite
// signs no body, so the body may follow at any pace.
func (s *earlyServer) signed(t *testing.T, method, path string, body io.Reader, length int64) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, s.endpoint+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = length
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("x-ms-version", "2019-02-02")
	acc := auth.DevStoreAccount()
	if err := auth.SignSharedKeyLite(req, acc.Name, acc.Keys[0]); err != nil {
		t.Fatal(err)
	}
	return req
}

// bodyPastLimit is the size of the body the clients below send: past the
// 4 MiB a request may carry, as Azurite's test "Should not insert entities
// with request body greater than 4 MB" sends through @azure/data-tables.
const bodyPastLimit = 4<<20 + 512<<10

// earlyAnswers are requests answered before their body is read, each
// with a body of bodyPastLimit bytes: the declared length refused, and
// an insert refused by its signature.
var earlyAnswers = []struct {
	name     string
	path     string
	wrongSig bool
	status   int
	code     string
}{
	{"413 RequestBodyTooLarge", "/early", false, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge"},
	{"403 AuthenticationFailed", "/early", true, http.StatusForbidden, "AuthenticationFailed"},
	{"400 InvalidUri", "/early()/more", false, http.StatusBadRequest, "InvalidUri"},
}

// TestServeAnswersWhileTheClientSends: a request refused before its body
// is read (413 for a body past 4 MiB, 403 for a bad signature) gets its
// answer while the client is still sending the body, over HTTP/1.1, HTTPS
// and HTTP/2. Over HTTP/1.x the client can then finish sending: the server
// reads the rest of the body (within bounds, shared/httpapi drain.go)
// instead of closing the connection under it, which made the kernel reset
// the connection and a client that had not read the answer yet lose it.
// Over HTTP/2 the server ends the stream and the client stops sending.
// Either way the connection then serves the next request.
func TestServeAnswersWhileTheClientSends(t *testing.T) {
	t.Parallel()
	plain, overTLS := startEarlyServe(t, false), startEarlyServe(t, true)
	for _, tc := range earlyAnswers {
		t.Run("HTTP/1.1 "+tc.name, func(t *testing.T) {
			sendOverHTTP1(t, plain, func() (net.Conn, error) { return net.Dial("tcp", plain.host) }, tc.path, tc.wrongSig, tc.status, tc.code)
		})
		t.Run("HTTPS "+tc.name, func(t *testing.T) {
			sendOverHTTP1(t, overTLS, func() (net.Conn, error) { return tls.Dial("tcp", overTLS.host, overTLS.tls) }, tc.path, tc.wrongSig, tc.status, tc.code)
		})
		t.Run("HTTP/2 "+tc.name, func(t *testing.T) {
			sendOverHTTP2(t, overTLS, tc.path, tc.wrongSig, tc.status, tc.code)
		})
	}
}

// sendOverHTTP1 writes the request line and headers, then the body in
// chunks on one connection while another goroutine reads; it checks that
// the answer arrives before the body is all sent, that the rest of the
// body goes out, and that the connection answers a second request.
func sendOverHTTP1(t *testing.T, s *earlyServer, dial func() (net.Conn, error), path string, wrongSig bool, status int, code string) {
	conn, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := s.signed(t, http.MethodPost, path, nil, bodyPastLimit)
	if wrongSig {
		req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+strings.Repeat("A", 43)+"=")
	}
	if _, err := io.WriteString(conn, rawHeader(req, bodyPastLimit)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	var sent atomic.Int64
	answered := make(chan *http.Response, 1)
	go func() {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Errorf("reading the answer after %d body bytes: %v", sent.Load(), err)
			close(answered)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body = io.NopCloser(bytes.NewReader(body))
		answered <- resp
	}()
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	var resp *http.Response
	for sent.Load() < bodyPastLimit {
		n := min(int64(len(chunk)), bodyPastLimit-sent.Load())
		_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(chunk[:n]); err != nil {
			t.Fatalf("the body could not be sent past %d of %d bytes: %v", sent.Load(), bodyPastLimit, err)
		}
		sent.Add(n)
		if resp == nil && sent.Load() >= 1<<20 {
			// The answer comes while a good part of the body is unsent.
			select {
			case resp = <-answered:
			case <-time.After(10 * time.Second):
				t.Fatalf("no answer after %d body bytes", sent.Load())
			}
			if resp == nil {
				return
			}
			wantAzureError(t, resp, status, code)
		}
	}
	// The same connection serves the next request.
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	next := s.signed(t, http.MethodGet, "/Tables", nil, 0)
	if _, err := io.WriteString(conn, rawHeader(next, -1)); err != nil {
		t.Fatalf("the next request: %v", err)
	}
	resp2, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("the next request's answer: %v", err)
	}
	wantAzureStatus(t, resp2, http.StatusOK)
}

// sendOverHTTP2 sends the request over HTTP/2 with a body it feeds in
// chunks through a pipe. The answer must arrive while the body is still
// being sent; the server then ends the stream (RST_STREAM NO_ERROR, RFC
// 9113 section 8.1), the client stops sending and keeps the answer, and
// the connection serves the next request.
func sendOverHTTP2(t *testing.T, s *earlyServer, path string, wrongSig bool, status int, code string) {
	client := s.client(true)
	pr, pw := io.Pipe()
	req := s.signed(t, http.MethodPost, path, pr, bodyPastLimit)
	if wrongSig {
		req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+strings.Repeat("A", 43)+"=")
	}
	var sent atomic.Int64
	stopped := make(chan error, 1)
	go func() {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for sent.Load() < bodyPastLimit {
			n, err := pw.Write(chunk[:min(int64(len(chunk)), bodyPastLimit-sent.Load())])
			sent.Add(int64(n))
			if err != nil {
				stopped <- err
				return
			}
		}
		stopped <- pw.Close()
	}()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("the request: %v", err)
	}
	if at := sent.Load(); at >= bodyPastLimit {
		t.Errorf("answered after the whole body was sent, want before")
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("answered over %s, want HTTP/2", resp.Proto)
	}
	wantAzureError(t, resp, status, code)
	select {
	case err := <-stopped:
		if err != nil && err != io.ErrClosedPipe {
			t.Errorf("sending the body ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the client was never told to stop sending")
	}
	next, err := client.Do(s.signed(t, http.MethodGet, "/Tables", nil, 0))
	if err != nil {
		t.Fatalf("the next request: %v", err)
	}
	wantAzureStatus(t, next, http.StatusOK)
}

func wantAzureStatus(t *testing.T, resp *http.Response, status int) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status {
		t.Fatalf("got %d %s: %s; want %d", resp.StatusCode, resp.Header.Get("x-ms-error-code"), body, status)
	}
}

// TestServeDrainIsBounded: what is left of a refused body is read within
// bounds (shared/httpapi drain.go), so a client cannot hold a connection
// by sending: a body declared past 8 MiB is not read at all and its
// connection closes after the answer; a body that trickles is read only
// until the body timeout; a client that asked to be told before sending
// (Expect: 100-continue) is answered without being waited for. Each gets
// its answer first.
func TestServeDrainIsBounded(t *testing.T) {
	t.Parallel()
	s := startLimitedServe(t, serveLimits{bodyTimeout: 500 * time.Millisecond})
	dialAndSend := func(t *testing.T, header string) (net.Conn, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", s.host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
		if _, err := io.WriteString(conn, header); err != nil {
			t.Fatal(err)
		}
		return conn, bufio.NewReader(conn)
	}
	closed := func(t *testing.T, br *bufio.Reader) {
		t.Helper()
		if _, err := br.ReadByte(); err == nil {
			t.Fatal("the connection stayed open")
		}
	}

	t.Run("DeclaredPastTheBound", func(t *testing.T) {
		const declared = 64 << 20
		conn, br := dialAndSend(t, rawHeader(s.signed(t, http.MethodPost, "/limits", nil), declared))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantAzureError(t, resp, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		sent := 0
		for sent < declared {
			n, err := conn.Write(chunk)
			sent += n
			if err != nil {
				break
			}
		}
		if sent >= declared {
			t.Fatalf("the server took all %d bytes of a body declared past the bound", sent)
		}
		closed(t, br)
	})

	t.Run("DeclaredAtTheBound", func(t *testing.T) {
		// Twice the 4 MiB a request may carry, the most a drain reads: all
		// of it is read, and the connection serves the next request.
		const declared = 8 << 20
		conn, br := dialAndSend(t, rawHeader(s.signed(t, http.MethodPost, "/limits", nil), declared))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantAzureError(t, resp, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
		if _, err := conn.Write(bytes.Repeat([]byte("x"), declared)); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, rawHeader(s.signed(t, http.MethodGet, "/Tables", nil), -1)); err != nil {
			t.Fatal(err)
		}
		next, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("the next request on the connection: %v", err)
		}
		next.Body.Close()
		if next.StatusCode != http.StatusOK {
			t.Fatalf("the next request on the connection: %d", next.StatusCode)
		}
	})

	t.Run("TricklePastTheBodyTimeout", func(t *testing.T) {
		req := s.signed(t, http.MethodPost, "/limits", nil)
		req.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:"+strings.Repeat("A", 43)+"=")
		conn, br := dialAndSend(t, rawHeader(req, 100000))
		go func() {
			for {
				if _, err := conn.Write([]byte("{")); err != nil {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		}()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantAzureError(t, resp, http.StatusForbidden, "AuthenticationFailed")
		start := time.Now()
		closed(t, br)
		if waited := time.Since(start); waited > 10*time.Second {
			t.Errorf("the connection was held %v after the answer", waited)
		}
	})

	// A chunked body declares no length: it is read until it passes 4 MiB,
	// refused, and the rest drained; the connection goes on.
	t.Run("ChunkedPastTheLimit", func(t *testing.T) {
		req := s.signed(t, http.MethodPost, "/limits", nil)
		req.Header.Set("Transfer-Encoding", "chunked")
		conn, br := dialAndSend(t, rawHeader(req, -1))
		answered := make(chan *http.Response, 1)
		go func() {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Errorf("the answer: %v", err)
				close(answered)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body = io.NopCloser(bytes.NewReader(body))
			answered <- resp
		}()
		frame := []byte(fmt.Sprintf("%x\r\n%s\r\n", 64<<10, bytes.Repeat([]byte(" "), 64<<10)))
		for sent := 0; sent < bodyPastLimit; sent += 64 << 10 {
			if _, err := conn.Write(frame); err != nil {
				t.Fatalf("the body could not be sent past %d bytes: %v", sent, err)
			}
		}
		if _, err := io.WriteString(conn, "0\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp := <-answered
		if resp == nil {
			return
		}
		wantAzureError(t, resp, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
		if _, err := io.WriteString(conn, rawHeader(s.signed(t, http.MethodGet, "/Tables", nil), -1)); err != nil {
			t.Fatal(err)
		}
		next, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("the next request's answer: %v", err)
		}
		wantAzureStatus(t, next, http.StatusOK)
	})

	t.Run("ExpectContinue", func(t *testing.T) {
		req := s.signed(t, http.MethodPost, "/limits", nil)
		req.Header.Set("Expect", "100-continue")
		_, br := dialAndSend(t, rawHeader(req, bodyPastLimit))
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantAzureError(t, resp, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
		closed(t, br)
	})
}
