package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// runtimeAPI is the Lambda Runtime API for one function process, served on
// loopback the way Lambda (or sam local's Runtime Interface Emulator)
// serves it: the bootstrap polls /next for an event, posts the result to
// /response or /error, and reports a failed init to /init/error.
type runtimeAPI struct {
	srv     *httptest.Server
	pending chan *invocation

	mu       sync.Mutex
	inflight map[string]*invocation
	initErr  *runtimeError

	firstNext     chan struct{}
	firstNextOnce sync.Once
	firstNextAt   time.Time
	initFailed    chan struct{}
	failOnce      sync.Once
	nextID        atomic.Int64
}

type invocation struct {
	id      string
	payload []byte
	done    chan invocationResult
}

type invocationResult struct {
	body []byte
	err  *runtimeError
}

// runtimeError is what a runtime posts to /error and /init/error.
type runtimeError struct {
	Message string `json:"errorMessage"`
	Type    string `json:"errorType"`
	Header  string `json:"-"` // Lambda-Runtime-Function-Error-Type
}

func (e *runtimeError) Error() string { return e.Type + ": " + e.Message }

func newRuntimeAPI(t testing.TB) *runtimeAPI {
	api := &runtimeAPI{
		pending:    make(chan *invocation),
		inflight:   map[string]*invocation{},
		firstNext:  make(chan struct{}),
		initFailed: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", api.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", api.response)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", api.invocationError)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", api.initError)
	api.srv = httptest.NewServer(mux)
	t.Cleanup(api.srv.Close)
	return api
}

// address is AWS_LAMBDA_RUNTIME_API: host:port, no scheme.
func (a *runtimeAPI) address() string { return strings.TrimPrefix(a.srv.URL, "http://") }

func (a *runtimeAPI) next(w http.ResponseWriter, r *http.Request) {
	a.firstNextOnce.Do(func() {
		a.firstNextAt = time.Now()
		close(a.firstNext)
	})
	select {
	case inv := <-a.pending:
		a.mu.Lock()
		a.inflight[inv.id] = inv
		a.mu.Unlock()
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(30*time.Second).UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:tablebridge")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0")
		h.Set("Content-Type", "application/json")
		_, _ = w.Write(inv.payload)
	case <-r.Context().Done():
	}
}

func (a *runtimeAPI) take(id string) *invocation {
	a.mu.Lock()
	defer a.mu.Unlock()
	inv := a.inflight[id]
	delete(a.inflight, id)
	return inv
}

func (a *runtimeAPI) response(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	inv := a.take(r.PathValue("id"))
	if err != nil || inv == nil {
		http.Error(w, `{"errorMessage":"unknown invocation","errorType":"InvalidRequestID"}`, http.StatusBadRequest)
		return
	}
	inv.done <- invocationResult{body: body}
	w.WriteHeader(http.StatusAccepted)
}

func readRuntimeError(r *http.Request) *runtimeError {
	var e runtimeError
	b, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(b, &e); err != nil {
		e.Message = string(b)
	}
	e.Header = r.Header.Get("Lambda-Runtime-Function-Error-Type")
	return &e
}

func (a *runtimeAPI) invocationError(w http.ResponseWriter, r *http.Request) {
	e := readRuntimeError(r)
	inv := a.take(r.PathValue("id"))
	if inv == nil {
		http.Error(w, `{"errorMessage":"unknown invocation","errorType":"InvalidRequestID"}`, http.StatusBadRequest)
		return
	}
	inv.done <- invocationResult{err: e}
	w.WriteHeader(http.StatusAccepted)
}

func (a *runtimeAPI) initError(w http.ResponseWriter, r *http.Request) {
	e := readRuntimeError(r)
	a.mu.Lock()
	a.initErr = e
	a.mu.Unlock()
	a.failOnce.Do(func() { close(a.initFailed) })
	w.WriteHeader(http.StatusAccepted)
}

// invoke hands payload to the next /next and waits for the result.
func (a *runtimeAPI) invoke(ctx context.Context, payload []byte, exited <-chan struct{}) ([]byte, error) {
	inv := &invocation{id: fmt.Sprintf("8476a536-e9f4-11e8-9739-%012d", a.nextID.Add(1)), payload: payload,
		done: make(chan invocationResult, 1)}
	select {
	case a.pending <- inv:
	case <-exited:
		return nil, errors.New("the function process exited before taking the event")
	case <-ctx.Done():
		return nil, fmt.Errorf("no /next for the event: %w", ctx.Err())
	}
	select {
	case res := <-inv.done:
		if res.err != nil {
			return nil, res.err
		}
		return res.body, nil
	case <-exited:
		return nil, errors.New("the function process exited during the invocation")
	case <-ctx.Done():
		return nil, fmt.Errorf("no response for the event: %w", ctx.Err())
	}
}

// process is one running bootstrap, as a Lambda execution environment.
type process struct {
	name    string
	api     *runtimeAPI
	cmd     *exec.Cmd
	started time.Time
	out     *tail
	exited  chan struct{}
	waitErr error
}

// startProcess runs bin with env (plus AWS_LAMBDA_RUNTIME_API) and stops
// it when the test ends.
func startProcess(t testing.TB, name, bin string, env []string) *process {
	t.Helper()
	api := newRuntimeAPI(t)
	p := &process{name: name, api: api, out: &tail{max: 256 << 10}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin)
	p.cmd.Env = append(env, "AWS_LAMBDA_RUNTIME_API="+api.address(), "AWS_LAMBDA_FUNCTION_NAME=tablebridge-"+name)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Dir = filepath.Dir(bin)
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("--- output of %s:\n%s", name, p.out.String())
		}
	})
	return p
}

// stop kills the process and waits for it.
func (p *process) stop() {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// ready waits until the process asks for its first event, and returns the
// init duration: process start to first /next.
func (p *process) ready(ctx context.Context) (time.Duration, error) {
	select {
	case <-p.api.firstNext:
		return p.api.firstNextAt.Sub(p.started), nil
	case <-p.api.initFailed:
		return 0, fmt.Errorf("%s: init failed: %v", p.name, p.api.initErr)
	case <-p.exited:
		return 0, fmt.Errorf("%s exited during init: %v", p.name, p.waitErr)
	case <-ctx.Done():
		return 0, fmt.Errorf("%s: no /next: %w", p.name, ctx.Err())
	}
}

// invoke sends an API Gateway event and decodes the proxy response.
func (p *process) invoke(ctx context.Context, ev events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	payload, err := json.Marshal(ev)
	if err != nil {
		return events.APIGatewayProxyResponse{}, err
	}
	body, err := p.api.invoke(ctx, payload, p.exited)
	if err != nil {
		return events.APIGatewayProxyResponse{}, fmt.Errorf("%s: %w", p.name, err)
	}
	var resp events.APIGatewayProxyResponse
	if err := json.Unmarshal(body, &resp); err != nil {
		return resp, fmt.Errorf("%s: response is not an API Gateway proxy response: %v: %s", p.name, err, body)
	}
	return resp, nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// jsonLines decodes the JSON lines of the output, skipping others.
func (t *tail) jsonLines() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(t.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// buildBootstraps builds every function's bootstrap once per test binary,
// for the host (GOOS=linux, the host's GOARCH): deployment targets arm64
// (make build), but the harness must run what it builds. One go build of
// all the packages links them in parallel.
var bootstraps struct {
	once sync.Once
	dir  string
	err  error
}

func buildBootstraps(t testing.TB, names []string) string {
	t.Helper()
	bootstraps.once.Do(func() {
		dir, err := os.MkdirTemp("", "tablebridge-bootstraps-")
		if err != nil {
			bootstraps.err = err
			return
		}
		bootstraps.dir = dir
		pkgs := make([]string, len(names))
		for i, n := range names {
			pkgs[i] = "./" + n
		}
		args := append([]string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(dir, "bin") + string(filepath.Separator)}, pkgs...)
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			bootstraps.err = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		for _, n := range names {
			if err := os.MkdirAll(filepath.Join(dir, n), 0o755); err != nil {
				bootstraps.err = err
				return
			}
			if err := os.Rename(filepath.Join(dir, "bin", n), filepath.Join(dir, n, "bootstrap")); err != nil {
				bootstraps.err = err
				return
			}
		}
	})
	if bootstraps.err != nil {
		t.Fatal(bootstraps.err)
	}
	return bootstraps.dir
}
