package localproc

import (
	"os"
	"sync"
	"testing"
)

// EnvCI, when set to anything, makes a server that cannot start a test
// failure instead of a skip.
const EnvCI = "CI"

// Shared is one server per test binary, started by the first test that asks
// for it and stopped by Close from TestMain. Declare it as a package
// variable; the zero value of its unexported state is ready to use.
type Shared struct {
	// EnvEndpoint names an environment variable that, when set, holds the
	// endpoint of a server already running; then Start is never called.
	EnvEndpoint string
	// Tests names the tests in the skip message: "SKIPPING <Tests> tests".
	Tests string
	// Server names the server in the failure message: "<Server>
	// unavailable".
	Server string
	// Start starts the server and returns its endpoint and how to stop it.
	Start func() (endpoint string, stop func(), err error)
	// Skippable reports whether a start error skips the tests (outside CI)
	// rather than failing them; nil skips on every error.
	Skippable func(err error) bool
	// Hint returns the line printed under a start error, e.g. how to
	// install the server.
	Hint func(err error) string

	once     sync.Once
	mu       sync.Mutex // guards stop against a Close racing a late start
	endpoint string
	stop     func()
	err      error
}

// Endpoint returns the shared server's endpoint: $EnvEndpoint when set,
// otherwise a server started once for this test binary. When the server
// cannot start it skips t with a loud message saying why and what to do,
// or fails t when $CI is set or the error is not Skippable.
func (s *Shared) Endpoint(t testing.TB) string {
	t.Helper()
	s.once.Do(s.start)
	if s.err != nil {
		skippable := s.Skippable == nil || s.Skippable(s.err)
		if skippable && os.Getenv(EnvCI) == "" {
			t.Skipf("\n*** SKIPPING %s tests: %v\n*** %s\n*** (with CI set, this is a failure)", s.Tests, s.err, s.hint())
		}
		t.Fatalf("%s unavailable: %v\n%s", s.Server, s.err, s.hint())
	}
	return s.endpoint
}

func (s *Shared) start() {
	if ep := os.Getenv(s.EnvEndpoint); s.EnvEndpoint != "" && ep != "" {
		s.endpoint = ep
		return
	}
	endpoint, stop, err := s.Start()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endpoint, s.stop, s.err = endpoint, stop, err
}

func (s *Shared) hint() string {
	if s.Hint == nil {
		return ""
	}
	return s.Hint(s.err)
}

// Err returns the error that kept the server from starting, or nil when it
// started, was configured through EnvEndpoint, or was never asked for. Call
// it after the tests ran, e.g. to repeat a skip notice that only go test -v
// would show.
func (s *Shared) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close stops the server Endpoint started, if any. It is safe to call more
// than once; TestMain calls it after m.Run.
func (s *Shared) Close() {
	s.mu.Lock()
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// SkipShort skips t under go test -short, the mode of make check, which
// runs only what needs Go alone: a test of a server or tool from outside Go
// (DynamoDB Local, Azurite, Chromium, the Azure CLI, ...) skips there even
// when the tool is installed and CI is set. make test runs without -short,
// and there a missing tool still fails under CI.
func SkipShort(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: skipped under -short (make check); make test runs it", what)
	}
}
