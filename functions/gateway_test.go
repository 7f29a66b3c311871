package functions_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/tablebridge/tablebridge/internal/gatewayevent"
)

// invoker delivers an event (JSON, as Lambda hands it to the runtime) to
// the named function and returns its answer: a bootstrap under the Lambda
// Runtime Interface Emulator, or an in-process handler.
type invoker func(ctx context.Context, fn string, payload []byte) ([]byte, error)

// gateway is the front door of one profile for the tests, on loopback: it
// turns each HTTP request into the event that profile delivers, built from
// aws-lambda-go's published sample (gatewayevent.Build), routes it to the
// function the profile routes it to, and turns the answer, read in the
// event's format, back into HTTP.
type gateway struct {
	opts   gatewayevent.Options
	invoke invoker
	srv    *httptest.Server

	mu    sync.Mutex
	calls map[string]int // function name -> invocations
	fails atomic.Int64
}

func newGateway(t testing.TB, opts gatewayevent.Options, invoke invoker) *gateway {
	g := &gateway{opts: opts, invoke: invoke, calls: map[string]int{}}
	g.srv = httptest.NewServer(g)
	t.Cleanup(g.srv.Close)
	return g
}

// prefix is what the client puts before /account: stage, base path or
// nothing.
func (g *gateway) prefix() string { return g.opts.MountPrefix() }

// accountURL is the endpoint a connection string names.
func (g *gateway) accountURL(account string) string {
	return g.srv.URL + g.prefix() + "/" + account
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	payload, fn, err := gatewayevent.Build(r, g.opts)
	if err != nil {
		// What a REST API answers for a path or method without a route.
		w.Header().Set("x-amzn-ErrorType", "MissingAuthenticationTokenException")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `{"message":"Missing Authentication Token"}`)
		return
	}
	g.mu.Lock()
	g.calls[fn.Name]++
	g.mu.Unlock()
	out, err := g.invoke(r.Context(), fn.Name, payload)
	var resp gatewayevent.Response
	if err == nil {
		resp, err = gatewayevent.DecodeResponse(g.opts.Profile, out)
	}
	if err != nil {
		g.fails.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = fmt.Fprintf(w, `{"message":"Internal server error","tablebridgeTest":%q}`, err.Error())
		return
	}
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs
	}
	w.WriteHeader(resp.Status)
	_, _ = w.Write(resp.Body)
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
