package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// limitedServer is a `tablebridge serve` on loopback with the given limits
// and one table, "limits".
type limitedServer struct {
	endpoint string // http://127.0.0.1:port/devstoreaccount1
	host     string // 127.0.0.1:port
}

func startLimitedServe(t testing.TB, limits serveLimits) *limitedServer {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	cfg := serveConfig{listen: "127.0.0.1:0", dataDir: t.TempDir(), storeKind: "bolt",
		accounts: auth.AccountList{auth.DevStoreAccount()}, limits: limits}
	connStr, done := startServeConfig(t, ctx, cfg)
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	endpoint := regexp.MustCompile(`TableEndpoint=([^;]+)`).FindStringSubmatch(connStr)[1]
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "limits", nil); err != nil {
		t.Fatal(err)
	}
	return &limitedServer{endpoint: endpoint, host: strings.TrimPrefix(strings.Split(endpoint, "/devstoreaccount1")[0], "http://")}
}

// signed returns a SharedKeyLite-signed request for path under the account.
func (s *limitedServer) signed(t testing.TB, method, path string, body []byte) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, s.endpoint+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("x-ms-version", "2019-02-02")
	acc := auth.DevStoreAccount()
	if err := auth.SignSharedKeyLite(req, acc.Name, acc.Keys[0]); err != nil {
		t.Fatal(err)
	}
	return req
}

// rawHeader is req's request line and headers as they go on the wire, for
// a client that then sends (or reads) at its own pace.
func rawHeader(req *http.Request, contentLength int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), req.URL.Host)
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	if contentLength >= 0 {
		fmt.Fprintf(&b, "Content-Length: %d\r\n", contentLength)
	}
	b.WriteString("\r\n")
	return b.String()
}

// hostileEntityBody is the entity body built to cost the most within the
// 4 MiB request bound: 4 MiB of 358,000 one-character properties, each
// named apart.
func hostileEntityBody() []byte {
	var b bytes.Buffer
	b.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
	for i := 0; b.Len() < 4<<20-16; i++ {
		fmt.Fprintf(&b, `,"%s":"x"`, strconv.FormatInt(int64(i), 36))
	}
	b.WriteByte('}')
	return b.Bytes()
}

func wantAzureError(t testing.TB, resp *http.Response, status int, code string) {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != status || resp.Header.Get("x-ms-error-code") != code || resp.Header.Get("x-ms-request-id") == "" {
		t.Fatalf("got %d %q (request id %q): %s; want %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"),
			resp.Header.Get("x-ms-request-id"), body, status, code)
	}
}

// TestServeRefusesHostileEntityBodies holds the bounds on the request body
// and on the properties of an entity body (SECURITY.md, "Limits and
// timeouts") over the real server: the 4 MiB body of 358,000 properties is 400
// TooManyProperties and costs the server about one copy of itself, and a
// body past 4 MiB is 413 RequestBodyTooLarge without being read.
func TestServeRefusesHostileEntityBodies(t *testing.T) {
	s := startLimitedServe(t, serveLimits{maxRequests: 64, maxBodyBytes: 64 << 20})
	body := hostileEntityBody()
	client := &http.Client{}

	resp, err := client.Do(s.signed(t, http.MethodPost, "/limits", body))
	if err != nil {
		t.Fatal(err)
	}
	wantAzureError(t, resp, http.StatusBadRequest, "TooManyProperties")

	// Allocation is counted, not timed: everything the process allocated
	// for a few such requests, client included, over the body's size.
	const rounds = 4
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range rounds {
		resp, err := client.Do(s.signed(t, http.MethodPut, "/limits(PartitionKey='p',RowKey='r')", body))
		if err != nil {
			t.Fatal(err)
		}
		wantAzureError(t, resp, http.StatusBadRequest, "TooManyProperties")
	}
	runtime.ReadMemStats(&after)
	perRequest := float64(after.TotalAlloc-before.TotalAlloc) / rounds
	if ratio := perRequest / float64(len(body)); ratio > 2 {
		t.Fatalf("allocated %.0f bytes per refused %d-byte body (%.1fx), want at most 2x", perRequest, len(body), ratio)
	}

	tooLarge := append(bytes.Repeat([]byte(" "), 4<<20), "{}"...)
	resp, err = client.Do(s.signed(t, http.MethodPost, "/limits", tooLarge))
	if err != nil {
		t.Fatal(err)
	}
	wantAzureError(t, resp, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
}

// slowBodyClient sends a signed insert declaring a 100000-byte body, then
// one byte per interval, and returns the connection.
func slowBodyClient(t *testing.T, s *limitedServer, interval time.Duration) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", s.host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req := s.signed(t, http.MethodPost, "/limits", nil)
	if _, err := io.WriteString(conn, rawHeader(req, 100000)); err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			if _, err := conn.Write([]byte("{")); err != nil {
				return
			}
			time.Sleep(interval)
		}
	}()
	return conn
}

// TestServeCutsOffSlowBodies holds the bound on the time to send a request
// body (SECURITY.md, "Limits and timeouts"): a body that trickles is cut
// off after the body timeout with Azure's 500 OperationTimedOut, and the
// connection is closed. The client's own 10 s deadline only keeps a broken
// server from hanging the test.
func TestServeCutsOffSlowBodies(t *testing.T) {
	t.Parallel()
	s := startLimitedServe(t, serveLimits{bodyTimeout: 300 * time.Millisecond})
	conn := slowBodyClient(t, s, 50*time.Millisecond)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantAzureError(t, resp, http.StatusInternalServerError, "OperationTimedOut")
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open after a body timeout")
	}
}

// TestServeBoundsRequestsInFlight: past -max-requests, a request is
// answered 503 ServerBusy at once; the slots come back when requests end.
func TestServeBoundsRequestsInFlight(t *testing.T) {
	t.Parallel()
	s := startLimitedServe(t, serveLimits{maxRequests: 2, bodyTimeout: 2 * time.Second})
	// A slow client that a probe beat to a slot is answered 503 at once;
	// answered tells of it, and a new slow client takes its place.
	answered := make(chan net.Conn, 16)
	slow := func() net.Conn {
		c := slowBodyClient(t, s, 100*time.Millisecond)
		go func() {
			if _, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
				answered <- c
			}
		}()
		return c
	}
	clients := []net.Conn{slow(), slow()}
	get := func() *http.Response {
		resp, err := http.DefaultClient.Do(s.signed(t, http.MethodGet, "/limits()", nil))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// Probe until the slow clients hold both slots.
	var resp *http.Response
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp = get()
		if resp.StatusCode == http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		resp.Body.Close()
		select {
		case c := <-answered:
			c.Close()
			clients = append(clients, slow())
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	wantAzureError(t, resp, http.StatusServiceUnavailable, "ServerBusy")
	for _, c := range clients {
		c.Close()
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp = get()
		if resp.StatusCode == http.StatusOK || time.Now().After(deadline) {
			break
		}
		resp.Body.Close()
		time.Sleep(20 * time.Millisecond)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("after the slow clients left: %d", resp.StatusCode)
	}
}

// TestServeBoundsBodyBytesInFlight: bodies declared past -max-body-bytes
// in flight are answered 503 ServerBusy before they are read.
func TestServeBoundsBodyBytesInFlight(t *testing.T) {
	t.Parallel()
	s := startLimitedServe(t, serveLimits{maxBodyBytes: 150000, bodyTimeout: 5 * time.Second})
	slowBodyClient(t, s, 100*time.Millisecond) // holds 100000 bytes
	var resp *http.Response
	for deadline := time.Now().Add(5 * time.Second); ; {
		var err error
		resp, err = http.DefaultClient.Do(s.signed(t, http.MethodPost, "/limits", bytes.Repeat([]byte(" "), 60000)))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		resp.Body.Close()
		time.Sleep(10 * time.Millisecond)
	}
	wantAzureError(t, resp, http.StatusServiceUnavailable, "ServerBusy")
	// A request without a body still gets through.
	resp, err := http.DefaultClient.Do(s.signed(t, http.MethodGet, "/limits()", nil))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("query: %d", resp.StatusCode)
	}
}

// fillPartition inserts n entities into "limits", each with a string of
// size control characters (six bytes each in JSON).
func fillPartition(t testing.TB, s *limitedServer, n, size int) {
	t.Helper()
	connStr := "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=" + auth.DevStoreAccountKey +
		";TableEndpoint=" + s.endpoint + ";"
	svc, err := aztables.NewServiceClientFromConnectionString(connStr, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := svc.NewClient("limits")
	pad := strings.Repeat(`\u0001`, size)
	for start := 0; start < n; start += 100 {
		var actions []aztables.TransactionAction
		for i := start; i < min(start+100, n); i++ {
			e := fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%06d","Pad":"%s"}`, i, pad)
			actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: []byte(e)})
		}
		if _, err := client.SubmitTransaction(context.Background(), actions, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// stallQuery sends a query for the whole "limits" table and reads only the
// answer's headers (a few KiB of it): the answer is then being written,
// and stays so until the write timeout. (The slot of the request before may
// not be released yet when its client has the answer: a 503 is retried.)
func stallQuery(t *testing.T, s *limitedServer) (*http.Response, *net.TCPConn) {
	t.Helper()
	var resp *http.Response
	var conn *net.TCPConn
	for attempt := 0; ; attempt++ {
		var err error
		conn, err = net.DialTCP("tcp", nil, func() *net.TCPAddr { a, _ := net.ResolveTCPAddr("tcp", s.host); return a }())
		if err != nil {
			t.Fatal(err)
		}
		c := conn
		t.Cleanup(func() { c.Close() })
		_ = conn.SetReadBuffer(4096)
		if _, err := io.WriteString(conn, rawHeader(s.signed(t, http.MethodGet, "/limits()", nil), -1)); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		if resp, err = http.ReadResponse(bufio.NewReader(conn), nil); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			break
		}
		if resp.StatusCode != http.StatusServiceUnavailable || attempt == 20 {
			t.Fatalf("the query to stall answered %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return resp, conn
}

// TestServeDropsStalledReaders holds the bound on the time to read an answer
// (SECURITY.md, "Limits and timeouts"): a client that asks for a
// page of 1000 entities and never reads it loses its connection after the
// write timeout, and its share of the in-flight bound comes back.
func TestServeDropsStalledReaders(t *testing.T) {
	t.Parallel()
	// An answer budget past the 12 MiB page, which the default 4 MiB would
	// cut into pages the kernel's loopback buffers might hold whole.
	s := startLimitedServe(t, serveLimits{maxRequests: 1, writeTimeout: 300 * time.Millisecond, answerBudget: 64 << 20})
	// Control characters go out as \u0001: 2 MiB stored, a 12 MiB answer,
	// more than loopback buffers hold.
	fillPartition(t, s, 1000, 2<<10)
	stalled, conn := stallQuery(t, s)
	// The slot comes back once the write timeout drops the stalled answer.
	var status int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.DefaultClient.Do(s.signed(t, http.MethodGet, "/limits()?$top=1", nil))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if status = resp.StatusCode; status == http.StatusOK {
			break
		}
	}
	if status != http.StatusOK {
		t.Fatalf("the stalled reader still holds its slot: %d", status)
	}
	// What the kernel had buffered still arrives, then nothing: the
	// server wrote no more after the timeout.
	_ = conn.SetReadDeadline(time.Now().Add(time.Second))
	n, err := io.Copy(io.Discard, stalled.Body)
	if err == nil || n >= stalled.ContentLength {
		t.Fatalf("read %d of %d bytes (%v): the stalled answer was not dropped", n, stalled.ContentLength, err)
	}
}

// The XML bodies (ACL, service properties) are bounded at 256 KiB, declared
// or chunked: 413 RequestBodyTooLarge, not twenty times the body in
// encoding/xml's allocations.
func TestServeBoundsXMLBodies(t *testing.T) {
	t.Parallel()
	s := startLimitedServe(t, serveLimits{})
	var doc strings.Builder
	doc.WriteString("<SignedIdentifiers>")
	for doc.Len() < 300<<10 {
		doc.WriteString("<SignedIdentifier><Id>x</Id></SignedIdentifier>")
	}
	doc.WriteString("</SignedIdentifiers>")
	for _, chunked := range []bool{false, true} {
		req := s.signed(t, http.MethodPut, "/limits?comp=acl", []byte(doc.String()))
		req.Header.Set("Content-Type", "application/xml")
		if chunked {
			req.ContentLength = -1
			req.Body = io.NopCloser(strings.NewReader(doc.String()))
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		wantAzureError(t, resp, http.StatusRequestEntityTooLarge, "RequestBodyTooLarge")
	}
}

// Answers being written to clients that do not read are bounded: past
// -max-answer-bytes a large answer is replaced by 503 ServerBusy, a small
// one still goes out, and the large one does once the stalled answer is
// dropped.
func TestServeBoundsAnswerBytes(t *testing.T) {
	t.Parallel()
	// The stalled answer must still be held when the next query comes, on a
	// loaded machine too: the write timeout that drops it is generous, and
	// the test waits for it rather than assuming how long it takes.
	s := startLimitedServe(t, serveLimits{maxAnswerBytes: 16 << 20, writeTimeout: 5 * time.Second, answerBudget: 64 << 20})
	fillPartition(t, s, 1000, 2<<10) // 12 MiB answers
	stalled, _ := stallQuery(t, s)
	if stalled.ContentLength < 10<<20 {
		t.Fatalf("answer of %d bytes: the test needs one past half the bound", stalled.ContentLength)
	}
	get := func(path string) *http.Response {
		resp, err := http.DefaultClient.Do(s.signed(t, http.MethodGet, path, nil))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	wantAzureError(t, get("/limits()"), http.StatusServiceUnavailable, "ServerBusy")
	if resp := get("/limits()?$top=1"); resp.StatusCode != http.StatusOK {
		t.Fatalf("a small answer: %d", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	var status int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp := get("/limits()")
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if status = resp.StatusCode; status == http.StatusOK {
			break
		}
	}
	if status != http.StatusOK {
		t.Fatalf("the large answer after the stalled one was dropped: %d", status)
	}
}
