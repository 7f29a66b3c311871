package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/localproc"
)

// rieFunction is one function's real bootstrap under the AWS Lambda
// Runtime Interface Emulator (aws-lambda-rie, built from the Go module
// proxy by make tools), on loopback: the emulator runs the bootstrap, serves
// it the Runtime API, and takes invocations on
// /2015-03-31/functions/function/invocations, one at a time, like one
// Lambda execution environment. It prints START, END and REPORT lines
// (Duration, Billed Duration) around each invocation.
type rieFunction struct {
	name string
	proc *localproc.Process
	out  *tail
	// mu serializes invocations: an execution environment takes one at a
	// time.
	mu    sync.Mutex
	seq   atomic.Int64
	calls atomic.Int64
}

// rieBinary finds aws-lambda-rie: .tools/bin (make tools installs it
// there), then PATH. Without it the test skips, or fails under CI.
func rieBinary(t testing.TB) string {
	t.Helper()
	if root, err := localproc.ModuleRoot(); err == nil {
		p := filepath.Join(root, ".tools", "bin", "aws-lambda-rie")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("aws-lambda-rie"); err == nil {
		return p
	}
	msg := "aws-lambda-rie is not installed: run make tools (GOBIN=$PWD/.tools/bin go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d)"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip("SKIP (install to run): " + msg)
	return ""
}

// startRIE runs bootstrap under the emulator with env and stops it when
// the test ends. The bootstrap initializes on the first invocation, as
// Lambda's on-demand init does.
func startRIE(t testing.TB, rie, name, bootstrap string, env []string) *rieFunction {
	t.Helper()
	f := &rieFunction{name: name, out: &tail{max: 8 << 20}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	proc, err := localproc.Start(ctx, localproc.Spec{
		Name: "aws-lambda-rie " + name, ErrPrefix: "rie", Program: rie,
		Args: func(port int) []string {
			api, err := localproc.FreePort()
			if err != nil {
				api = port + 1
			}
			return []string{"--runtime-interface-emulator-address", "127.0.0.1:" + strconv.Itoa(port),
				"--runtime-api-address", "127.0.0.1:" + strconv.Itoa(api), "--log-level", "info", bootstrap}
		},
		WorkDirPattern: "tablebridge-rie-", ProbePath: "/", StartTimeout: 20 * time.Second,
		Env: append(env, "AWS_LAMBDA_FUNCTION_NAME=tablebridge-"+name), Output: f.out,
	})
	if err != nil {
		t.Fatal(err)
	}
	f.proc = proc
	t.Cleanup(func() {
		proc.Stop()
		if t.Failed() {
			t.Logf("--- output of %s:\n%s", name, lastLines(f.out.String(), 60))
		}
	})
	return f
}

// invoke posts one event and returns the function's answer. An error the
// runtime reported (init or invocation) comes back as an error.
func (f *rieFunction) invoke(ctx context.Context, payload []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls.Add(1)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.proc.URL+"/2015-03-31/functions/function/invocations", bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Amzn-RequestId", fmt.Sprintf("%s-%06d", f.name, f.seq.Add(1)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.name, err)
	}
	if resp.StatusCode != http.StatusOK || bytes.Contains(body[:min(len(body), 200)], []byte(`"errorType"`)) {
		return body, fmt.Errorf("%s: the emulator answered %s: %.500s", f.name, resp.Status, body)
	}
	return body, nil
}

// report is one REPORT line of the emulator.
type report struct {
	requestID        string
	duration, billed float64 // ms
}

var reportLine = regexp.MustCompile(`REPORT RequestId: (\S+)\t(?:Init Duration: [0-9.]+ ms\t)?Duration: ([0-9.]+) ms\tBilled Duration: ([0-9.]+) ms`)

// reports returns the REPORT lines printed so far.
func (f *rieFunction) reports() []report {
	var out []report
	for _, m := range reportLine.FindAllStringSubmatch(f.out.String(), -1) {
		d, _ := strconv.ParseFloat(m[2], 64)
		b, _ := strconv.ParseFloat(m[3], 64)
		out = append(out, report{requestID: m[1], duration: d, billed: b})
	}
	return out
}

var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// initMillis is the emulator's measure of the first init (process start to
// the first /next), or -1 before one.
func (f *rieFunction) initMillis() float64 {
	m := initReport.FindStringSubmatch(f.out.String())
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
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
// as make build does but for the host's architecture (GOOS=linux,
// CGO_ENABLED=0, -tags lambda.norpc): deployment targets arm64, but the
// emulator runs what this machine can. One go build links them all.
var bootstraps struct {
	once sync.Once
	dir  string
	err  error
}

func buildBootstraps(t testing.TB) string {
	t.Helper()
	bootstraps.once.Do(func() {
		dir, err := os.MkdirTemp("", "tablebridge-bootstraps-")
		if err != nil {
			bootstraps.err = err
			return
		}
		bootstraps.dir = dir
		names := bootstrapNames()
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
