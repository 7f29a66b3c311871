package migrate

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"
)

// Progress receives progress per table. Every method is safe for concurrent
// use. A line is identified by its name (a table, or "a -> b").
type Progress interface {
	// Begin starts, or restarts, the line: a phase ("counting", "copying",
	// "verifying"), the entity total (-1 when unknown) and how many are
	// already done (resumed from a checkpoint).
	Begin(name, phase string, total, done int64)
	// Add counts n more entities done.
	Add(name string, n int64)
	// End closes the line with its outcome.
	End(name string, err error)
	// Close stops the display.
	Close() error
}

// NoProgress discards everything.
type NoProgress struct{}

func (NoProgress) Begin(string, string, int64, int64) {}
func (NoProgress) Add(string, int64)                  {}
func (NoProgress) End(string, error)                  {}
func (NoProgress) Close() error                       { return nil }

// line is one table's counters, shared by both displays.
type line struct {
	name, phase string
	total, done int64 // done includes resumed
	resumed     int64
	start       time.Time
	ended       bool
	err         error
	bar         *progressbar.ProgressBar
	barShown    int64 // what the bar has been told
}

// rate is entities per second since Begin, resumed ones excluded.
func (l *line) rate(now time.Time) float64 {
	secs := now.Sub(l.start).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(l.done-l.resumed) / secs
}

// status formats the line for logs: "copying T: 1200/5000 (24.0%) 812/s ETA 5s".
func (l *line) status(now time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", l.phase, l.name, l.done)
	r := l.rate(now)
	if l.total >= 0 {
		pct := 100.0
		if l.total > 0 {
			pct = 100 * float64(l.done) / float64(l.total)
		}
		fmt.Fprintf(&b, "/%d (%.1f%%)", l.total, pct)
	}
	fmt.Fprintf(&b, " %.0f/s", r)
	if l.total >= 0 && !l.ended && r > 0 && l.done < l.total {
		eta := time.Duration(float64(l.total-l.done) / r * float64(time.Second))
		fmt.Fprintf(&b, " ETA %s", eta.Round(time.Second))
	}
	return b.String()
}

// display holds the lines and the clock both implementations share.
type display struct {
	mu        sync.Mutex
	w         io.Writer
	now       func() time.Time
	lines     []*line
	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (d *display) find(name string) *line {
	for _, l := range d.lines {
		if l.name == name {
			return l
		}
	}
	return nil
}

// begin starts the named line afresh, adding it if it is new. The caller
// holds mu.
func (d *display) begin(name, phase string, total, done int64) *line {
	l := d.find(name)
	if l == nil {
		l = &line{}
		d.lines = append(d.lines, l)
	}
	*l = line{name: name, phase: phase, total: total, done: done, resumed: done, start: d.now()}
	return l
}

// Add counts n more entities done on the named line.
func (d *display) Add(name string, n int64) {
	d.mu.Lock()
	if l := d.find(name); l != nil {
		l.done += n
	}
	d.mu.Unlock()
}

// LogProgress writes plain lines, for output that is not a terminal: one
// when a table starts and ends, and a status line per active table every
// interval.
type LogProgress struct{ display }

// NewLogProgress logs to w every interval (default 10 s).
func NewLogProgress(w io.Writer, interval time.Duration) *LogProgress {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	p := &LogProgress{display{w: w, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}}
	go p.loop(interval)
	return p
}

func (p *LogProgress) loop(interval time.Duration) {
	defer close(p.done)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.tick()
		}
	}
}

func (p *LogProgress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	for _, l := range p.lines {
		if !l.ended {
			fmt.Fprintln(p.w, l.status(now))
		}
	}
}

func (p *LogProgress) Begin(name, phase string, total, done int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.begin(name, phase, total, done)
	msg := fmt.Sprintf("%s %s", phase, name)
	if total >= 0 {
		msg += fmt.Sprintf(": %d entities", total)
	}
	if done > 0 {
		msg += fmt.Sprintf(", resuming after %d", done)
	}
	fmt.Fprintln(p.w, msg)
}

func (p *LogProgress) End(name string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.find(name)
	if l == nil {
		return
	}
	l.ended, l.err = true, err
	now := p.now()
	if err != nil {
		fmt.Fprintf(p.w, "%s (stopped: %v) in %s\n", l.status(now), err, now.Sub(l.start).Round(time.Millisecond))
		return
	}
	fmt.Fprintf(p.w, "%s done in %s\n", l.status(now), now.Sub(l.start).Round(time.Millisecond))
}

// Close stops the periodic lines; it is safe to call more than once.
func (p *LogProgress) Close() error {
	p.closeOnce.Do(func() { close(p.stop) })
	<-p.done
	return nil
}

// BarProgress draws one progress bar per active table (schollz/progressbar:
// count, rate and ETA) on a terminal, redrawn in place every refresh. The
// library draws one bar per writer; this keeps a bar per table that renders
// into a string and stacks the strings with ANSI cursor movement. Finished
// tables scroll up as permanent lines.
type BarProgress struct {
	display
	width func() int
	drawn int // active lines drawn last frame
}

// NewBarProgress draws on w, a terminal; width reports its columns (nil: 80).
func NewBarProgress(w io.Writer, width func() int) *BarProgress {
	if width == nil {
		width = func() int { return 80 }
	}
	p := &BarProgress{display: display{w: w, now: time.Now, stop: make(chan struct{}), done: make(chan struct{})}, width: width}
	go p.loop()
	return p
}

func (p *BarProgress) loop() {
	defer close(p.done)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

func newBar(l *line) *progressbar.ProgressBar {
	max := l.total - l.resumed
	if l.total < 0 {
		max = -1
	} else if max <= 0 {
		max = 1 // the library refuses a zero max; an empty table fills at once
	}
	desc := l.phase + " " + l.name
	if l.resumed > 0 {
		desc += fmt.Sprintf(" (+%d resumed)", l.resumed)
	}
	bar := progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(io.Discard),
		progressbar.OptionSetDescription(desc),
		// The name goes last, so a narrow terminal cuts it rather than
		// the rate and the ETA.
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionSetWidth(10),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("entities"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		// No spinner goroutine: this display is the only one touching
		// the bar, which keeps String free of data races.
		progressbar.OptionSetSpinnerChangeInterval(0),
	)
	// Start the clocks now, not at the first frame, so the first rate is
	// not a burst divided by nothing.
	bar.StartWithoutRender()
	return bar
}

// draw is one frame: move up over the last frame's active lines, print the
// lines that ended since as permanent ones, then the active bars.
func (p *BarProgress) draw() {
	var b strings.Builder
	if p.drawn > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", p.drawn)
	}
	width := p.width()
	now := p.now()
	var still []*line
	for _, l := range p.lines {
		p.sync(l)
		if l.ended {
			text := l.status(now) + " done"
			if l.err != nil {
				text = l.status(now) + " stopped: " + l.err.Error()
			}
			b.WriteString("\r\x1b[2K" + fit(text, width) + "\n")
			continue
		}
		still = append(still, l)
	}
	for _, l := range still {
		b.WriteString("\r\x1b[2K" + fit(l.bar.String(), width) + "\n")
	}
	// Clear what is left of a taller previous frame.
	extra := p.drawn - len(still)
	for i := 0; i < extra; i++ {
		b.WriteString("\r\x1b[2K\n")
	}
	if extra > 0 {
		fmt.Fprintf(&b, "\x1b[%dA", extra)
	}
	p.drawn = len(still)
	p.lines = still
	io.WriteString(p.w, b.String())
}

// sync feeds the bar what happened since the last frame.
func (p *BarProgress) sync(l *line) {
	if l.bar == nil {
		l.bar = newBar(l)
	}
	if delta := l.done - l.resumed - l.barShown; delta > 0 {
		_ = l.bar.Add64(delta)
		l.barShown += delta
	}
}

// fit cuts s to the terminal width, so no line wraps and the cursor
// arithmetic holds.
func fit(s string, width int) string {
	if width <= 1 || utf8.RuneCountInString(s) < width {
		return s
	}
	r := []rune(s)
	return string(r[:width-1])
}

func (p *BarProgress) Begin(name, phase string, total, done int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l := p.begin(name, phase, total, done)
	l.bar = newBar(l)
}

func (p *BarProgress) End(name string, err error) {
	p.mu.Lock()
	if l := p.find(name); l != nil {
		l.ended, l.err = true, err
	}
	p.mu.Unlock()
}

// Close draws the last frame and stops; it is safe to call more than once.
func (p *BarProgress) Close() error {
	p.closeOnce.Do(func() {
		close(p.stop)
		<-p.done
		p.mu.Lock()
		p.draw()
		p.mu.Unlock()
	})
	return nil
}
