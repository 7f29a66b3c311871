package migrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Checkpoint is the resumable state of a migration, kept as JSON in one
// file. It only ever records what the destination acknowledged: a range's
// Next moves past a page once every entity of that page is written, so a
// resumed run starts at the first page that may not be, and rewrites at most
// the pages in flight when the run stopped. Upserts make that replay
// harmless.
type Checkpoint struct {
	// Version is the file format, currently 1.
	Version int `json:"version"`
	// Source and Dest identify the endpoints (Describe), so a checkpoint is
	// never applied to another migration by mistake.
	Source string `json:"source"`
	Dest   string `json:"dest"`
	// KeepTimestamp is the -keep-timestamp property name; part of the
	// identity, since it changes what is written.
	KeepTimestamp string `json:"keepTimestamp,omitempty"`
	// Updated is when the file was last written.
	Updated time.Time `json:"updated"`
	// Tables holds one entry per table the migration has started.
	Tables []*TableState `json:"tables"`
}

// TableState is one table's progress.
type TableState struct {
	Source string `json:"source"`
	Dest   string `json:"dest"`
	// Total is the entity count from the discovery pass, or -1 if unknown.
	Total int64 `json:"total"`
	// Ranges are the PartitionKey ranges being copied; empty until the
	// discovery pass is done.
	Ranges []*RangeState `json:"ranges,omitempty"`
	// Done is set once every range is done.
	Done bool `json:"done"`
	// Started is when the bulk copy of the table first began (a resumed
	// copy keeps the first run's time): a follow's first pass copies what
	// was written since then. Zero in checkpoints from before follow,
	// where the first pass copies everything.
	Started time.Time `json:"started,omitzero"`
	// Follow is where a follow stands; nil until its first pass ends.
	Follow *FollowState `json:"follow,omitempty"`
}

// FollowState is a table's follow position (follow.go).
type FollowState struct {
	// Since is when the last completed pass began: the next pass copies
	// what has a Timestamp at or after Since minus the margin.
	Since time.Time `json:"since"`
	// Passes counts completed passes, PassesSinceSweep those since the
	// last key comparison.
	Passes           int `json:"passes"`
	PassesSinceSweep int `json:"passesSinceSweep"`
	// Swept is when the last key comparison began: the destination may
	// still hold what the source deleted since then.
	Swept time.Time `json:"swept,omitzero"`
}

// RangeState is one range's progress.
type RangeState struct {
	Range
	// Next is where the range resumes; nil at the start.
	Next *Continuation `json:"next,omitempty"`
	// Copied counts the entities acknowledged so far.
	Copied int64 `json:"copied"`
	Done   bool  `json:"done"`
}

const checkpointVersion = 1

// Copied sums the table's acknowledged entities.
func (t *TableState) Copied() int64 {
	var n int64
	for _, r := range t.Ranges {
		n += r.Copied
	}
	return n
}

// LoadCheckpoint reads a checkpoint file; a missing file is (nil, nil).
func LoadCheckpoint(path string) (*Checkpoint, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	var cp Checkpoint
	if err := json.Unmarshal(data, &cp); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("checkpoint %s: version %d, want %d", path, cp.Version, checkpointVersion)
	}
	return &cp, nil
}

// table returns the state of a source table (case-insensitive, as table
// names are), or nil.
func (c *Checkpoint) table(source string) *TableState {
	for _, t := range c.Tables {
		if strings.EqualFold(t.Source, source) {
			return t
		}
	}
	return nil
}

// checkpointFile guards a Checkpoint in memory and writes it to disk,
// atomically, at most every interval and on Flush. Without a path it only
// keeps the state in memory (dry runs, tests).
type checkpointFile struct {
	path     string
	interval time.Duration
	now      func() time.Time

	// flushMu keeps writes in order: a slower write of an older state must
	// not land after a newer one.
	flushMu sync.Mutex
	mu      sync.Mutex
	cp      *Checkpoint
	dirty   bool
	lastErr error
	stop    chan struct{}
	done    chan struct{}
}

func newCheckpointFile(path string, cp *Checkpoint, interval time.Duration) *checkpointFile {
	f := &checkpointFile{path: path, interval: interval, now: time.Now, cp: cp,
		stop: make(chan struct{}), done: make(chan struct{})}
	if path == "" || interval <= 0 {
		close(f.done)
		return f
	}
	go f.loop()
	return f
}

func (f *checkpointFile) loop() {
	defer close(f.done)
	t := time.NewTicker(f.interval)
	defer t.Stop()
	for {
		select {
		case <-f.stop:
			return
		case <-t.C:
			_ = f.Flush()
		}
	}
}

// update changes the state under the lock and marks it for writing.
func (f *checkpointFile) update(fn func(cp *Checkpoint)) {
	f.mu.Lock()
	fn(f.cp)
	f.dirty = true
	f.mu.Unlock()
}

// read runs fn under the lock.
func (f *checkpointFile) read(fn func(cp *Checkpoint)) {
	f.mu.Lock()
	fn(f.cp)
	f.mu.Unlock()
}

// Flush writes the state if it changed since the last write.
func (f *checkpointFile) Flush() error {
	if f.path == "" {
		return nil
	}
	f.flushMu.Lock()
	defer f.flushMu.Unlock()
	f.mu.Lock()
	if !f.dirty {
		err := f.lastErr
		f.mu.Unlock()
		return err
	}
	f.cp.Updated = f.now().UTC()
	data, err := json.MarshalIndent(f.cp, "", "  ")
	f.dirty = false
	f.mu.Unlock()
	if err == nil {
		err = writeFileAtomic(f.path, append(data, '\n'))
	}
	f.mu.Lock()
	if err != nil {
		f.dirty = true
		f.lastErr = fmt.Errorf("checkpoint: %w", err)
	} else {
		f.lastErr = nil
	}
	err = f.lastErr
	f.mu.Unlock()
	return err
}

// Close stops the background writer and writes the final state.
func (f *checkpointFile) Close() error {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	<-f.done
	return f.Flush()
}

// writeFileAtomic replaces path with data so that a reader, or a crash at
// any moment, sees the old file or the new one, never a mix: write a
// temporary file in the same directory, sync it, rename it over path, sync
// the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		// Not every filesystem can sync a directory; the rename is
		// done either way.
		_ = d.Sync()
		d.Close()
	}
	return nil
}
