package dynamostore

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// countingConn counts the writes a connection makes.
type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// opaqueBody is a request body net/http cannot tell is in memory, as the
// SDK's is.
type opaqueBody struct{ io.Reader }

func (opaqueBody) Close() error { return nil }

func TestSingleWriteClient(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
	}))
	defer srv.Close()
	writes := new(atomic.Int64)
	transport := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countingConn{c, writes}, err
	}}
	defer transport.CloseIdleConnections()
	plain := &http.Client{Transport: transport}
	body := `{"TableName":"t","Key":{"PartitionKey":{"S":"p"}}}`
	send := func(c interface {
		Do(*http.Request) (*http.Response, error)
	}) int64 {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, opaqueBody{strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = int64(len(body))
		writes.Store(0)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got.Load() != body {
			t.Fatalf("server read %q; want %q", got.Load(), body)
		}
		return writes.Load()
	}
	send(plain) // dial outside the count
	if n := send(plain); n != 2 {
		t.Logf("net/http wrote an opaque body's request in %d writes (2 expected; the wrapper's reason)", n)
	}
	if n := send(singleWriteClient{plain}); n != 1 {
		t.Errorf("singleWriteClient sent the request in %d writes; want 1", n)
	}
}

// TestTuneClient: the store's client keeps the caller's options (here a
// middleware that counts calls) and gains both changes, once.
func TestTuneClient(t *testing.T) {
	t.Parallel()
	counter := newCallCounter()
	base := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String("http://127.0.0.1:1"),
		Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
		HTTPClient:  cannedHTTP{status: 200, body: []byte(`{"Item":{"PartitionKey":{"S":"p"}}}`)},
	}, counter.option)
	tuned := tuneClient(base).(*dynamodb.Client)
	again := tuneClient(tuned).(*dynamodb.Client)
	o := again.Options()
	if p, ok := o.Protocol.(pageProtocol); !ok || isPageProtocol(p.ClientProtocol) {
		t.Errorf("Protocol = %T (inner %T); want pageProtocol once", o.Protocol, p.ClientProtocol)
	}
	if h, ok := o.HTTPClient.(singleWriteClient); !ok {
		t.Errorf("HTTPClient = %T; want singleWriteClient", o.HTTPClient)
	} else if _, twice := h.next.(singleWriteClient); twice {
		t.Error("singleWriteClient wraps itself")
	}
	out, err := again.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String("t"), Key: keyItem("p", "r")})
	if err != nil || stringAttr(out.Item, attrPartitionKey) != "p" {
		t.Fatalf("GetItem = %v, %v", out, err)
	}
	if calls := counter.take(); calls["GetItem"] != 1 {
		t.Errorf("calls %v; want the caller's middleware to see 1 GetItem", calls)
	}
	var fake API = fakeAPI{}
	if tuneClient(fake) != fake {
		t.Error("tuneClient changed a client that is not a *dynamodb.Client")
	}
}

func isPageProtocol(p any) bool { _, ok := p.(pageProtocol); return ok }

type fakeAPI struct{ API }

// failingDoer records whether a request reached it.
type failingDoer struct{ called *bool }

func (d failingDoer) Do(*http.Request) (*http.Response, error) {
	*d.called = true
	return nil, errors.New("unreachable")
}

// TestSingleWriteClientShortBody: a body shorter than its ContentLength is
// an error, and the request is not sent.
func TestSingleWriteClientShortBody(t *testing.T) {
	t.Parallel()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:1", opaqueBody{strings.NewReader("short")})
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = 100
	called := false
	if _, err := (singleWriteClient{failingDoer{&called}}).Do(req); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Do = %v; want io.ErrUnexpectedEOF", err)
	}
	if called {
		t.Error("the request was sent")
	}
}
