package azurite

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
	"strconv"
	"sync"
	"time"
)

// Environment variables the harness reads.
const (
	// EnvEndpoint names a running Azurite table endpoint to use instead of
	// starting one: the account URL, e.g.
	// http://127.0.0.1:10002/devstoreaccount1.
	EnvEndpoint = "TABLEBRIDGE_AZURITE_ENDPOINT"
	// EnvDir overrides the folder of the installed npm package (the one
	// holding package.json and dist/).
	EnvDir = "TABLEBRIDGE_AZURITE_DIR"
	// EnvCI makes a missing Azurite a test failure instead of a skip.
	EnvCI = "CI"
)

// The emulator's well-known development account. Azurite accepts it by
// default ("Use the Azurite emulator for local Azure Storage development").
const (
	AccountName = "devstoreaccount1"
	AccountKey  = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// ErrNotInstalled reports that Node.js or the azurite package is missing.
var ErrNotInstalled = errors.New("azurite: Azurite is not installed")

// installHint tells a developer how to get Azurite.
const installHint = "install it with infra/azurite/install.sh (or make tools; needs npm and Node.js)"

// packageDir is where infra/azurite/install.sh puts the package, relative to
// the module root.
const packageDir = ".tools/azurite/node_modules/azurite"

// tableMain is the table service's entry point inside the package (its
// "azurite-table" bin).
const tableMain = "dist/src/table/main.js"

// startTimeout bounds how long Start waits for Node.js to answer. It usually
// takes 1-2 s; a loaded machine needs more.
const startTimeout = 60 * time.Second

// Instance is one running Azurite table service.
type Instance struct {
	// Endpoint is the account URL, path-style as the emulator spells it:
	// http://127.0.0.1:PORT/devstoreaccount1.
	Endpoint string
	// Port is the TCP port it listens on.
	Port int

	cmd      *exec.Cmd
	output   *tailBuffer
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// ConnectionString is the connection string of the development account at
// this instance.
func (i *Instance) ConnectionString() string { return connectionString(i.Endpoint) }

func connectionString(endpoint string) string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;",
		AccountName, AccountKey, endpoint)
}

// Find returns the folder of the installed azurite package:
// $TABLEBRIDGE_AZURITE_DIR when set, else .tools/azurite/node_modules/azurite
// under the module root, found by walking up from the working directory.
func Find() (string, error) {
	if dir := os.Getenv(EnvDir); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, tableMain)); err != nil {
			return "", fmt.Errorf("%w: %s=%s has no %s", ErrNotInstalled, EnvDir, dir, tableMain)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("azurite: %w", err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			pkg := filepath.Join(dir, packageDir)
			if _, err := os.Stat(filepath.Join(pkg, tableMain)); err != nil {
				return "", fmt.Errorf("%w under %s", ErrNotInstalled, filepath.Join(dir, ".tools"))
			}
			return pkg, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("%w: no go.mod above %s", ErrNotInstalled, wd)
		}
	}
}

// Start runs an in-memory Azurite table service on a free loopback port and
// returns once it answers HTTP. It returns an error wrapping ErrNotInstalled
// when Node.js or the package is missing. The caller must Stop the instance.
func Start(ctx context.Context) (*Instance, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, fmt.Errorf("%w: node is not on PATH", ErrNotInstalled)
	}
	dir, err := Find()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	// Azurite cannot report a port it chose itself (--tablePort 0 prints
	// 0), so pick one. Another process may take it between picking and
	// binding; then Node exits at once and we try another port.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		inst, err := launch(ctx, node, dir, port)
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

// args are the table service's flags: loopback only, nothing on disk
// (--inMemoryPersistence refuses --location, so the working directory is a
// throwaway folder for anything else it writes), any x-ms-version the SDKs
// send, unknown headers ignored, and no telemetry.
func args(dir string, port int) []string {
	return []string{
		filepath.Join(dir, tableMain),
		"--tableHost", "127.0.0.1",
		"--tablePort", strconv.Itoa(port),
		"--inMemoryPersistence",
		"--skipApiVersionCheck",
		"--loose",
		"--disableTelemetry",
	}
}

func launch(ctx context.Context, node, dir string, port int) (*Instance, error) {
	work, err := os.MkdirTemp("", "tablebridge-azurite-")
	if err != nil {
		return nil, fmt.Errorf("azurite: %w", err)
	}
	cmd := exec.Command(node, args(dir, port)...)
	cmd.Dir = work
	out := &tailBuffer{max: 8 << 10}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("azurite: starting node: %w", err)
	}
	inst := &Instance{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port) + "/" + AccountName,
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

// waitReady polls until the service answers any HTTP request. An unsigned
// GET is refused (403), which proves the service is up.
func (i *Instance) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, i.Endpoint+"/Tables", nil)
		if err != nil {
			return fmt.Errorf("azurite: %w", err)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-i.exited:
			return fmt.Errorf("azurite: Azurite exited before answering (%v); output:\n%s", i.waitErr, i.output)
		case <-ctx.Done():
			return fmt.Errorf("azurite: Azurite did not answer on port %d: %w; output:\n%s", i.Port, ctx.Err(), i.output)
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
		return 0, fmt.Errorf("azurite: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it; Azurite's output is
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
