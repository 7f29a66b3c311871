package localproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Spec says how to run one server and how to tell that it answers.
type Spec struct {
	// Name names the server in error messages, e.g. "Azurite".
	Name string
	// ErrPrefix leads every error Start returns, e.g. "azurite", so the
	// errors read like the calling package's own.
	ErrPrefix string
	// Program is the executable to run, usually a path from exec.LookPath.
	Program string
	// Args returns the program's arguments for a server on port, which
	// must listen on 127.0.0.1 (or on every interface).
	Args func(port int) []string
	// WorkDirPattern names the throwaway working directory (an
	// os.MkdirTemp pattern). It is removed when the process exits.
	WorkDirPattern string
	// ProbePath is the path Start polls, e.g. "/". Any HTTP answer, even
	// an error status, proves the server is up: the probe is unsigned, and
	// storage emulators refuse unsigned requests.
	ProbePath string
	// StartTimeout bounds the whole of Start, retries included; zero
	// leaves only the caller's context.
	StartTimeout time.Duration
	// Env is the program's environment; nil inherits this process's.
	Env []string
	// Output, when set, also receives everything the program writes to
	// stdout and stderr (Process keeps only the tail).
	Output io.Writer
	// Port, when set, is the port to run on, once: a server restarted
	// where its clients expect it. Zero picks a free port.
	Port int
}

// portAttempts is how many free ports Start tries before giving up.
const portAttempts = 3

// Polling for readiness: how often, and how long one probe may take.
const (
	probeInterval = 50 * time.Millisecond
	probeTimeout  = time.Second
)

// Process is one running server.
type Process struct {
	// Port is the loopback TCP port it listens on.
	Port int
	// URL is its base URL, http://127.0.0.1:PORT, without a trailing
	// slash.
	URL string

	cmd      *exec.Cmd
	output   *tailBuffer
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// Start runs spec's server on a free loopback port (or spec.Port) and
// returns once it answers HTTP at spec.ProbePath. When the server exits
// before answering (typically because another process took the port
// first) Start tries again on another port, up to three times in all,
// unless spec.Port named the one. The caller must Stop the process.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if spec.StartTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, spec.StartTimeout)
		defer cancel()
	}
	if spec.Port != 0 {
		return launch(ctx, spec, spec.Port)
	}
	var lastErr error
	for attempt := 0; attempt < portAttempts; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec.ErrPrefix, err)
		}
		p, err := launch(ctx, spec, port)
		if err == nil {
			return p, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func (s Spec) validate() error {
	switch {
	case s.ErrPrefix == "":
		return errors.New("localproc: Spec.ErrPrefix is empty")
	case s.Name == "":
		return fmt.Errorf("%s: localproc.Spec.Name is empty", s.ErrPrefix)
	case s.Program == "":
		return fmt.Errorf("%s: localproc.Spec.Program is empty", s.ErrPrefix)
	case s.Args == nil:
		return fmt.Errorf("%s: localproc.Spec.Args is nil", s.ErrPrefix)
	}
	return nil
}

func launch(ctx context.Context, spec Spec, port int) (*Process, error) {
	work, err := os.MkdirTemp("", spec.WorkDirPattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.ErrPrefix, err)
	}
	cmd := exec.Command(spec.Program, spec.Args(port)...)
	cmd.Dir = work
	out := &tailBuffer{max: outputTail}
	cmd.Env = spec.Env
	var w io.Writer = out
	if spec.Output != nil {
		w = io.MultiWriter(out, spec.Output)
	}
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.SysProcAttr = childProcAttr()
	if err := cmd.Start(); err != nil {
		os.RemoveAll(work)
		return nil, fmt.Errorf("%s: starting %s: %w", spec.ErrPrefix, filepath.Base(spec.Program), err)
	}
	p := &Process{
		Port:   port,
		URL:    "http://127.0.0.1:" + strconv.Itoa(port),
		cmd:    cmd,
		output: out,
		exited: make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		os.RemoveAll(work)
		close(p.exited)
	}()
	if err := p.waitReady(ctx, spec); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// waitReady polls until the server answers any HTTP request, the process
// exits, or ctx ends.
func (p *Process) waitReady(ctx context.Context, spec Spec) error {
	client := &http.Client{Timeout: probeTimeout}
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL+spec.ProbePath, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", spec.ErrPrefix, err)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s: %s exited before answering (%v); output:\n%s", spec.ErrPrefix, spec.Name, p.waitErr, p.output)
		case <-ctx.Done():
			return fmt.Errorf("%s: %s did not answer on port %d: %w; output:\n%s", spec.ErrPrefix, spec.Name, p.Port, ctx.Err(), p.output)
		case <-tick.C:
		}
	}
}

// Stop kills the process and waits for it to exit. It is safe to call more
// than once, and from several goroutines.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		if p.cmd.Process != nil {
			_ = p.cmd.Process.Kill()
		}
	})
	<-p.exited
}

// Done is closed when the process exits, whether Stop killed it or not.
func (p *Process) Done() <-chan struct{} { return p.exited }

// Output returns the tail of the process's stdout and stderr, for
// diagnostics.
func (p *Process) Output() string { return p.output.String() }

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
// Another process may take it before the caller binds it.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Signal sends sig to the process, for tests that inject faults (SIGSTOP
// freezes a server with its connections open, SIGCONT resumes it).
func (p *Process) Signal(sig os.Signal) error {
	if p.cmd.Process == nil {
		return errors.New("localproc: process not started")
	}
	return p.cmd.Process.Signal(sig)
}
