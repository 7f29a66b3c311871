package serveproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// Stores are the stores the end-to-end tests of other clients run over, in
// order: the embedded store serve gives a new data directory (pebble), and
// DynamoDB Local. Start also takes "bolt", the embedded store of earlier
// releases.
var Stores = []string{"pebble", "dynamodb"}

// Server is one running `tablebridge serve`.
type Server struct {
	// AccountURL is devstoreaccount1's path-style endpoint.
	AccountURL string
	// ConnectionString is devstoreaccount1's, with the emulator's key.
	ConnectionString string
	// Account is devstoreaccount1's name.
	Account string
	// CertFile is the certificate to trust when the server serves HTTPS
	// (SelfSignedTLS), else empty.
	CertFile string
	// DataDir is serve's -data directory.
	DataDir string

	spec localproc.Spec
	mu   sync.Mutex
	proc *localproc.Process
	// killed holds the output of the processes Kill ended.
	killed []string
}

// An Option changes the server Start runs.
type Option func(*options)

type options struct {
	flags []string
	tls   bool
}

// Flags adds flags to serve's command line, e.g. Flags("-oauth", "basic").
func Flags(flags ...string) Option {
	return func(o *options) { o.flags = append(o.flags, flags...) }
}

// SelfSignedTLS serves HTTPS with -tls-self-signed: the Server's URLs are
// https, and its CertFile is the certificate serve made. (Start's
// readiness probe still speaks HTTP: Go's TLS server answers it with 400,
// which is answer enough.)
func SelfSignedTLS() Option {
	return func(o *options) { o.tls = true }
}

var build struct {
	once   sync.Once
	dir    string
	binary string
	err    error
}

// Binary builds cmd/tablebridge once per test binary and returns its path.
// Main removes it.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		root, err := localproc.ModuleRoot()
		if err != nil {
			build.err = err
			return
		}
		if build.dir, build.err = os.MkdirTemp("", "tablebridge-e2e-*"); build.err != nil {
			return
		}
		build.binary = filepath.Join(build.dir, "tablebridge")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		// -buildvcs=auto: stamp the commit when the tree is a git clone,
		// whatever GOFLAGS says (the version test reads it).
		cmd := exec.CommandContext(ctx, "go", "build", "-buildvcs=auto", "-o", build.binary, "./cmd/tablebridge")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/tablebridge: %w\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatalf("serveproc: %v", build.err)
	}
	return build.binary
}

// Main runs the tests, then stops the DynamoDB Local a test may have
// started and removes the built binary. Use it from TestMain:
// os.Exit(serveproc.Main(m)).
func Main(m *testing.M) int {
	code := dynamolocal.Main(m)
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	return code
}

// Start runs `tablebridge serve` for the test over store ("pebble" or
// "bolt": that engine in a data directory in t.TempDir(); "dynamodb":
// DynamoDB Local, which skips or fails the test as dynamolocal.Endpoint
// does, with a table prefix of the test's own), changed by opts. The server is stopped when the test ends; if the
// test failed, its request log is logged.
func Start(t testing.TB, store string, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	binary := Binary(t)
	// The data directory holds the embedded store, and the certificate of
	// -tls-self-signed whatever the store.
	dataDir := filepath.Join(t.TempDir(), "data")
	storeArgs := []string{"-data", dataDir}
	switch store {
	case "pebble", "bolt":
		storeArgs = append(storeArgs, "-store", store)
	case "dynamodb":
		storeArgs = append(storeArgs, "-store", "dynamodb", "-dynamodb-endpoint", dynamolocal.Endpoint(t),
			"-table-prefix", dynamolocal.UniqueName("e2e")+"-")
	default:
		t.Fatalf("serveproc: unknown store %q", store)
	}
	scheme := "http"
	if o.tls {
		scheme = "https"
		storeArgs = append(storeArgs, "-tls-self-signed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := localproc.Spec{
		Name:      "tablebridge serve",
		ErrPrefix: "serveproc",
		Program:   binary,
		Args: func(port int) []string {
			args := append([]string{"serve", "-listen", fmt.Sprintf("127.0.0.1:%d", port), "-log-requests"}, storeArgs...)
			return append(args, o.flags...)
		},
		WorkDirPattern: "tablebridge-serve-*",
		ProbePath:      "/",
	}
	p, err := localproc.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	dev := auth.DevStoreAccount()
	s := &Server{AccountURL: fmt.Sprintf("%s://127.0.0.1:%d/%s", scheme, p.Port, dev.Name), Account: dev.Name, DataDir: dataDir, proc: p}
	s.spec, s.spec.Port = spec, p.Port
	t.Cleanup(func() {
		p := s.process()
		p.Stop()
		if t.Failed() {
			for _, out := range s.killed {
				t.Logf("tablebridge serve (%s) output, until killed:\n%s", store, out)
			}
			t.Logf("tablebridge serve (%s) output:\n%s", store, p.Output())
		}
	})
	if o.tls {
		s.CertFile = filepath.Join(dataDir, "tls", "cert.pem")
	}
	s.ConnectionString = fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=%s;AccountKey=%s;TableEndpoint=%s;", scheme, s.Account, auth.DevStoreAccountKey, s.AccountURL)
	return s
}

func (s *Server) process() *localproc.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

// Kill ends the server with SIGKILL, as a crash or kill -9 would: nothing
// of its shutdown runs, and requests in flight lose their connection. It
// returns once the process is gone.
func (s *Server) Kill() {
	p := s.process()
	p.Stop()
	s.mu.Lock()
	s.killed = append(s.killed, p.Output())
	s.mu.Unlock()
}

// Restart starts the server again after Kill, with the same flags and
// data, on the same port, so its clients find it where it was.
func (s *Server) Restart() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := localproc.Start(ctx, s.spec)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	return nil
}

// Require returns the first of candidates (names or paths; empty ones are
// ignored) that is an executable check accepts (for example: a Python
// module imports; check may be nil), or stops the test: skipped loudly,
// naming hint, on a developer machine, failed when CI is set. Under go
// test -short it skips the test without looking (localproc.SkipShort).
func Require(t testing.TB, what, hint string, check func(path string) error, candidates ...string) string {
	t.Helper()
	localproc.SkipShort(t, what)
	var problems []string
	for _, c := range candidates {
		if c == "" {
			continue
		}
		p, err := exec.LookPath(c)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if check != nil {
			if err := check(p); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", p, err))
				continue
			}
		}
		return p
	}
	msg := fmt.Sprintf("*** %s is not installed (%s): %s", what, strings.Join(problems, "; "), hint)
	if os.Getenv(localproc.EnvCI) != "" {
		t.Fatal(msg)
	}
	fmt.Fprintln(os.Stderr, msg) // t.Skip shows only with -v; say it regardless
	t.Skip(msg)
	return ""
}
