package localproc

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// recordingTB stands in for the testing.TB that Shared.Endpoint skips or
// fails, so a test can check which happened without ending itself.
type recordingTB struct {
	testing.TB
	skipped, failed string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *recordingTB) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// endpointOf calls s.Endpoint on its own goroutine, as Skipf and Fatalf end
// the goroutine they run on.
func endpointOf(t *testing.T, s *Shared) (endpoint string, tb *recordingTB) {
	tb = &recordingTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		endpoint = s.Endpoint(tb)
	}()
	<-done
	return endpoint, tb
}

var errMissing = errors.New("widget is not installed")

// fakeServer is a Shared.Start that counts starts and stops.
type fakeServer struct {
	endpoint      string
	err           error
	starts, stops int
}

func (f *fakeServer) start() (string, func(), error) {
	f.starts++
	if f.err != nil {
		return "", nil, f.err
	}
	return f.endpoint, func() { f.stops++ }, nil
}

func newShared(f *fakeServer) *Shared {
	return &Shared{
		EnvEndpoint: "LOCALPROC_TEST_ENDPOINT",
		Tests:       "Widget",
		Server:      "Widget Server",
		Start:       f.start,
		Skippable:   func(err error) bool { return errors.Is(err, errMissing) },
		Hint: func(err error) string {
			if errors.Is(err, errMissing) {
				return "install it with make widget"
			}
			return "see its output above"
		},
	}
}

func TestSharedStartsOnceAndCloses(t *testing.T) {
	t.Setenv("LOCALPROC_TEST_ENDPOINT", "")
	f := &fakeServer{endpoint: "http://127.0.0.1:1"}
	s := newShared(f)
	for i := range 3 {
		if ep, tb := endpointOf(t, s); ep != f.endpoint || tb.skipped != "" || tb.failed != "" {
			t.Fatalf("call %d: Endpoint = %q (skipped %q, failed %q), want %q", i, ep, tb.skipped, tb.failed, f.endpoint)
		}
	}
	if f.starts != 1 {
		t.Errorf("started %d times, want once", f.starts)
	}
	if s.Err() != nil {
		t.Errorf("Err = %v, want nil", s.Err())
	}
	s.Close()
	s.Close()
	if f.stops != 1 {
		t.Errorf("stopped %d times, want once", f.stops)
	}
}

func TestSharedEnvEndpoint(t *testing.T) {
	t.Setenv("LOCALPROC_TEST_ENDPOINT", "http://127.0.0.1:9")
	f := &fakeServer{endpoint: "http://127.0.0.1:1"}
	s := newShared(f)
	if ep, _ := endpointOf(t, s); ep != "http://127.0.0.1:9" {
		t.Fatalf("Endpoint = %q, want the environment's", ep)
	}
	s.Close()
	if f.starts != 0 || f.stops != 0 {
		t.Errorf("starts, stops = %d, %d; want none with an external server", f.starts, f.stops)
	}
}

func TestSharedCloseWithoutStart(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	newShared(f).Close()
	if f.starts != 0 || f.stops != 0 {
		t.Errorf("starts, stops = %d, %d; want none", f.starts, f.stops)
	}
}

func TestSharedStartFailure(t *testing.T) {
	other := errors.New("widget crashed")
	tests := []struct {
		name     string
		err      error
		ci       string
		skipAll  bool // leave Skippable nil: every error skips
		wantSkip []string
		wantFail []string
	}{
		{
			name:     "not installed skips loudly",
			err:      fmt.Errorf("wrapped: %w", errMissing),
			wantSkip: []string{"*** SKIPPING Widget tests: wrapped: widget is not installed", "*** install it with make widget", "with CI set, this is a failure"},
		},
		{
			name:     "not installed fails under CI",
			err:      errMissing,
			ci:       "true",
			wantFail: []string{"Widget Server unavailable: widget is not installed", "install it with make widget"},
		},
		{
			name:     "other errors fail when not skippable",
			err:      other,
			wantFail: []string{"Widget Server unavailable: widget crashed", "see its output above"},
		},
		{
			name:     "nil Skippable skips every error",
			err:      other,
			skipAll:  true,
			wantSkip: []string{"SKIPPING Widget tests: widget crashed", "see its output above"},
		},
		{
			name:     "nil Skippable still fails under CI",
			err:      other,
			ci:       "1",
			skipAll:  true,
			wantFail: []string{"Widget Server unavailable: widget crashed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("LOCALPROC_TEST_ENDPOINT", "")
			t.Setenv(EnvCI, tt.ci)
			f := &fakeServer{err: tt.err}
			s := newShared(f)
			if tt.skipAll {
				s.Skippable = nil
			}
			for i := range 2 { // the second call reports the same without starting again
				ep, tb := endpointOf(t, s)
				if ep != "" {
					t.Errorf("call %d: Endpoint = %q after a failed start", i, ep)
				}
				checkContains(t, "skip message", tb.skipped, tt.wantSkip)
				checkContains(t, "failure message", tb.failed, tt.wantFail)
			}
			if f.starts != 1 {
				t.Errorf("started %d times, want once", f.starts)
			}
			if !errors.Is(s.Err(), tt.err) {
				t.Errorf("Err = %v, want %v", s.Err(), tt.err)
			}
			s.Close() // nothing to stop
		})
	}
}

// checkContains checks that got holds every string in want, and that got is
// empty when want is.
func checkContains(t *testing.T, what, got string, want []string) {
	t.Helper()
	if len(want) == 0 {
		if got != "" {
			t.Errorf("unexpected %s %q", what, got)
		}
		return
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s %q does not contain %q", what, got, w)
		}
	}
}

// TestSkipShort: under -short (make check) a test of an outside tool
// skips, naming the tool; otherwise SkipShort lets it run.
func TestSkipShort(t *testing.T) {
	t.Parallel()
	tb := &recordingTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		SkipShort(tb, "Widget Server")
	}()
	<-done
	if !testing.Short() {
		checkContains(t, "skip message", tb.skipped, nil)
		return
	}
	checkContains(t, "skip message", tb.skipped, []string{"needs Widget Server", "-short"})
}
