package migrate

import (
	"bytes"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the display's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLogProgress(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	p := NewLogProgress(&out, time.Hour)
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	p.Begin("Orders", "copying", 1000, 200)
	p.Add("Orders", 300)
	now = now.Add(10 * time.Second)
	p.tick()
	p.Begin("Users", "copying", -1, 0)
	p.Add("Users", 5)
	p.End("Users", errors.New("boom"))
	p.End("Orders", nil)
	p.Add("Nobody", 1) // unknown lines are ignored
	p.End("Nobody", nil)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"copying Orders: 1000 entities, resuming after 200\n",
		"copying Orders: 500/1000 (50.0%) 30/s ETA 17s\n",
		"copying Users: 5 0/s (stopped: boom)",
		"copying Orders: 500/1000 (50.0%) 30/s done in 10s\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

func TestBarProgress(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	p := NewBarProgress(&out, func() int { return 100 })
	p.Begin("Orders", "copying", 100, 0)
	p.Begin("Users", "counting", -1, 0)
	p.Add("Orders", 40)
	p.Add("Users", 7)
	p.mu.Lock()
	p.draw()
	p.mu.Unlock()
	frame := out.String()
	if !strings.Contains(frame, "copying Orders") || !strings.Contains(frame, "counting Users") {
		t.Fatalf("frame lacks the bars:\n%q", frame)
	}
	for _, line := range strings.Split(frame, "\n") {
		visible := line
		if i := strings.LastIndex(line, "\x1b[2K"); i >= 0 {
			visible = line[i+len("\x1b[2K"):]
		}
		if len([]rune(visible)) >= 100 {
			t.Errorf("line wider than the terminal: %q", visible)
		}
	}
	p.End("Orders", nil)
	p.End("Users", errors.New("boom"))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	final := out.String()[len(frame):]
	if !strings.Contains(final, "\x1b[2A") {
		t.Errorf("the final frame does not redraw over the two bars:\n%q", final)
	}
	if !strings.Contains(final, "copying Orders: 40/100 (40.0%)") || !strings.Contains(final, "done") || !strings.Contains(final, "stopped: boom") {
		t.Errorf("final frame = %q", final)
	}
}

func TestFit(t *testing.T) {
	t.Parallel()
	if got := fit("héllo world", 6); got != "héllo" {
		t.Fatalf("fit = %q", got)
	}
	if got := fit("short", 80); got != "short" {
		t.Fatalf("fit = %q", got)
	}
}

func TestNoProgress(t *testing.T) {
	t.Parallel()
	var p Progress = NoProgress{}
	p.Begin("a", "b", 1, 0)
	p.Add("a", 1)
	p.End("a", nil)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}
