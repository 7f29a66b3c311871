package functions_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/shared/lambdafn"
)

// invoker delivers an event to the named function: a bootstrap process
// through the Runtime API, or an in-process handler.
type invoker func(ctx context.Context, fn string, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// gateway is API Gateway for the tests: a REST API on loopback that turns
// each HTTP request into the payload 1.0 event API Gateway delivers
// (lambdafn.NewEvent: stage stripped from path but kept in
// requestContext.path, decoded query parameters, multiValueHeaders, body
// base64 under BinaryMediaTypes */*), routes it to the function the
// template routes it to, and turns the proxy response back into HTTP.
type gateway struct {
	stage  string
	invoke invoker
	srv    *httptest.Server

	mu    sync.Mutex
	calls map[string]int // function name -> invocations
	fails atomic.Int64
}

func newGateway(t testing.TB, stage string, invoke invoker) *gateway {
	g := &gateway{stage: stage, invoke: invoke, calls: map[string]int{}}
	g.srv = httptest.NewServer(g)
	t.Cleanup(g.srv.Close)
	return g
}

// accountURL is the endpoint a connection string names: stage included.
func (g *gateway) accountURL(account string) string {
	return g.srv.URL + "/" + g.stage + "/" + account
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev, fn, err := lambdafn.NewEvent(r, lambdafn.EventOptions{Stage: g.stage})
	if err != nil {
		// What API Gateway answers for a path or method without a route.
		w.Header().Set("x-amzn-ErrorType", "MissingAuthenticationTokenException")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"message":"Missing Authentication Token"}`)
		return
	}
	g.mu.Lock()
	g.calls[fn.Name]++
	g.mu.Unlock()
	resp, err := g.invoke(r.Context(), fn.Name, ev)
	if err != nil {
		g.fails.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = fmt.Fprintf(w, `{"message":"Internal server error","tablebridgeTest":%q}`, err.Error())
		return
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			g.fails.Add(1)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
	}
	h := w.Header()
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		h.Del(k)
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	h.Del("Content-Length") // API Gateway sets its own
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
}

func (g *gateway) invocations() map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]int, len(g.calls))
	for k, v := range g.calls {
		out[k] = v
	}
	return out
}

// secretsManager is a Secrets Manager endpoint on loopback that knows one
// secret; functions reach it through AWS_ENDPOINT_URL_SECRETS_MANAGER.
type secretsManager struct {
	srv    *httptest.Server
	id     string
	secret string
	calls  atomic.Int64
}

func newSecretsManager(t testing.TB, id, secret string) *secretsManager {
	sm := &secretsManager{id: id, secret: secret}
	sm.srv = httptest.NewServer(http.HandlerFunc(sm.serve))
	t.Cleanup(sm.srv.Close)
	return sm
}

func (sm *secretsManager) serve(w http.ResponseWriter, r *http.Request) {
	sm.calls.Add(1)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	var in struct{ SecretId string }
	b, _ := io.ReadAll(r.Body)
	if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" || json.Unmarshal(b, &in) != nil {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"InvalidRequestException","message":"unsupported call"}`)
		return
	}
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"UnrecognizedClientException","message":"not signed"}`)
		return
	}
	if in.SecretId != sm.id {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`)
		return
	}
	out, _ := json.Marshal(map[string]any{
		"ARN": "arn:aws:secretsmanager:us-east-1:123456789012:secret:" + sm.id + "-AbCdEf", "Name": sm.id,
		"SecretString": sm.secret, "VersionId": "e5e0bb8a-9a64-4fd8-8e2b-b7c2e4a2f8a1", "VersionStages": []string{"AWSCURRENT"},
		"CreatedDate": 1.7e9,
	})
	_, _ = w.Write(out)
}
