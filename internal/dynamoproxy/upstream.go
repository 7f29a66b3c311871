package dynamoproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// maxBody bounds a request or an answer read into memory. DynamoDB's
// largest are a BatchWriteItem request and a BatchGetItem answer, 16 MB.
const maxBody = 32 << 20

// upstreamTimeout bounds one call to the upstream, so a wedged DynamoDB
// Local fails the request instead of holding it forever. It does not follow
// the client's deadline: a write DynamoDB received lands whether or not its
// sender still waits.
const upstreamTimeout = 30 * time.Second

// answer is an upstream's (or the proxy's own) HTTP answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

type upstream struct {
	base   *url.URL
	client *http.Client
}

func newUpstream(endpoint string) (*upstream, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("dynamoproxy: upstream %q is not an absolute URL", endpoint)
	}
	return &upstream{base: u, client: &http.Client{
		Transport: &http.Transport{
			// Never an HTTP proxy from the environment: tests talk to
			// loopback only.
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			DisableCompression:  true, // bodies are read and rewritten as sent
			MaxIdleConnsPerHost: 64,
		},
		Timeout: upstreamTimeout,
	}}, nil
}

// hopHeaders are connection-level headers a proxy does not pass on (RFC
// 9110, section 7.6.1), plus Accept-Encoding: the proxy reads every answer,
// so it asks for it uncompressed and answers uncompressed.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Accept-Encoding", "Content-Length"}

// forward sends a client's request on: its headers, its body (possibly
// changed) and the Host it signed, so that a signature over Host still
// holds. DynamoDB Local does not check the payload hash, which a changed
// body no longer matches.
func (u *upstream) forward(ctx context.Context, r *http.Request, body []byte) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.base.JoinPath(r.URL.Path).String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, vs := range r.Header {
		req.Header[k] = vs
	}
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	req.Host = r.Host
	req.ContentLength = int64(len(body))
	return u.do(req)
}

// call sends a request of the proxy's own (a DescribeTable, a read of the
// items a write replaces) with the credentials of the client request it
// serves: DynamoDB Local keeps one database per access key and region.
func (u *upstream) call(ctx context.Context, from http.Header, op string, body []byte) (*answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.base.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for _, h := range []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token"} {
		if v := from.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	req.Header.Set("X-Amz-Target", targetPrefix+op)
	req.Header.Set("Content-Type", jsonContentType)
	return u.do(req)
}

func (u *upstream) do(req *http.Request) (*answer, error) {
	resp, err := u.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxBody {
		return nil, errors.New("dynamoproxy: upstream answer over " + strconv.Itoa(maxBody) + " bytes")
	}
	return &answer{status: resp.StatusCode, header: resp.Header, body: body}, nil
}

// callOK is call for a request that must succeed: an error answer becomes
// an error, and the body is decoded.
func (u *upstream) callOK(ctx context.Context, from http.Header, op string, in object) (object, error) {
	ans, err := u.call(ctx, from, op, in.encode())
	if err != nil {
		return nil, err
	}
	out, ok := decodeObject(ans.body)
	if ans.status != http.StatusOK || !ok {
		return nil, &upstreamError{op: op, status: ans.status, body: string(ans.body)}
	}
	return out, nil
}

type upstreamError struct {
	op     string
	status int
	body   string
}

func (e *upstreamError) Error() string {
	return fmt.Sprintf("dynamoproxy: upstream %s answered %d: %s", e.op, e.status, e.body)
}
