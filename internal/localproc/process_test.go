package localproc

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestStartServes(t *testing.T) {
	t.Parallel()
	p, err := Start(t.Context(), helperSpec(t, modeServe))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	if want := "http://127.0.0.1:" + strconv.Itoa(p.Port); p.URL != want {
		t.Errorf("URL = %q, want %q", p.URL, want)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(p.URL + "/anything")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("status = %d, want the helper's 403", resp.StatusCode)
	}
	select {
	case <-p.Done():
		t.Fatal("Done closed while the server runs")
	default:
	}
	// The helper prints its working directory: a fresh temp directory,
	// removed once the process exits.
	m := regexp.MustCompile(`helper serving on \d+ in (\S+)`).FindStringSubmatch(p.Output())
	if m == nil {
		t.Fatalf("Output = %q, want the helper's greeting", p.Output())
	}
	work := m[1]
	if wd, _ := os.Getwd(); work == wd || !strings.HasPrefix(filepath.Base(work), "localproc-test-") {
		t.Errorf("child ran in %q, want a fresh localproc-test-* directory", work)
	}
	p.Stop()
	if _, err := os.Stat(work); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("working directory %s left behind: %v", work, err)
	}
}

func TestStopIsIdempotent(t *testing.T) {
	t.Parallel()
	p, err := Start(t.Context(), helperSpec(t, modeServe))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(p.Stop)
	}
	wg.Wait()
	p.Stop()
	select {
	case <-p.Done():
	default:
		t.Fatal("Done not closed after Stop")
	}
	if _, err := (&http.Client{Timeout: 5 * time.Second}).Get(p.URL); err == nil {
		t.Error("the server still answers after Stop")
	}
}

func TestRestartOnTheSamePort(t *testing.T) {
	t.Parallel()
	first, err := Start(t.Context(), helperSpec(t, modeServe))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	first.Stop()
	spec := helperSpec(t, modeServe)
	spec.Port = first.Port
	again, err := Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start on port %d: %v", first.Port, err)
	}
	defer again.Stop()
	if again.URL != first.URL {
		t.Errorf("restarted at %s, want %s", again.URL, first.URL)
	}
}

func TestDoneWhenTheServerDies(t *testing.T) {
	t.Parallel()
	p, err := Start(t.Context(), helperSpec(t, modeServe))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer p.Stop()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done not closed after the process died")
	}
}

func TestStartEarlyExit(t *testing.T) {
	t.Parallel()
	_, err := Start(t.Context(), helperSpec(t, modeExit))
	if err == nil {
		t.Fatal("Start succeeded with a server that exits at once")
	}
	for _, want := range []string{
		"helpertest: Helper exited before answering",
		"exit status 3",
		"is already in use", // the child's own output
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}
}

func TestStartRetriesAnotherPort(t *testing.T) {
	t.Parallel()
	spec := helperSpec(t, modeFlaky)
	counter := filepath.Join(t.TempDir(), "runs")
	spec.Env = append(spec.Env, envHelperCounter+"="+counter)
	p, err := Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start: %v (the third attempt should serve)", err)
	}
	defer p.Stop()
	if b, _ := os.ReadFile(counter); strings.Count(string(b), "\n") != 3 {
		t.Errorf("the helper ran %d times, want 3", strings.Count(string(b), "\n"))
	}
}

func TestStartTimeout(t *testing.T) {
	t.Parallel()
	spec := helperSpec(t, modeSilent)
	spec.StartTimeout = 500 * time.Millisecond
	begin := time.Now()
	_, err := Start(t.Context(), spec)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "Helper did not answer on port") {
		t.Fatalf("Start error = %v, want a deadline naming the port", err)
	}
	if elapsed := time.Since(begin); elapsed > 10*time.Second {
		t.Errorf("Start took %v after a 500ms timeout", elapsed)
	}
}

func TestStartCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := Start(ctx, helperSpec(t, modeSilent))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start error = %v, want context.Canceled", err)
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	valid := func() Spec {
		return Spec{Name: "X", ErrPrefix: "x", Program: "/bin/true", Args: func(int) []string { return nil }}
	}
	tests := []struct {
		name   string
		change func(*Spec)
		want   string
	}{
		{"no prefix", func(s *Spec) { s.ErrPrefix = "" }, "localproc: Spec.ErrPrefix is empty"},
		{"no name", func(s *Spec) { s.Name = "" }, "x: localproc.Spec.Name is empty"},
		{"no program", func(s *Spec) { s.Program = "" }, "x: localproc.Spec.Program is empty"},
		{"no args", func(s *Spec) { s.Args = nil }, "x: localproc.Spec.Args is nil"},
		{"program missing", func(s *Spec) { s.Program = filepath.Join(t.TempDir(), "nosuch") }, "x: starting nosuch:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := valid()
			tt.change(&spec)
			_, err := Start(t.Context(), spec)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Start error = %v, want it to start with %q", err, tt.want)
			}
		})
	}
}

func TestFreePort(t *testing.T) {
	t.Parallel()
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("FreePort = %d", port)
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"under the limit", []string{"ab", "cd"}, "abcd"},
		{"exactly the limit", []string{"abcd", "ef"}, "abcdef"},
		{"keeps the tail", []string{"abcd", "efgh"}, "cdefgh"},
		{"one long write", []string{"0123456789"}, "456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &tailBuffer{max: 6}
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
		})
	}
}
