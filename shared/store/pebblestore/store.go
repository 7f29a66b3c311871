package pebblestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/record"
)

var _ store.Store = (*Store)(nil)

var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("pebblestore: store is closed")
	// ErrLocked is returned by Open when another process (or another Open
	// in this one) has the directory open.
	ErrLocked = errors.New("pebblestore: the directory is open in another process")
	// ErrCorrupt reports a stored record or key this version cannot
	// decode, or a directory of an unknown layout.
	ErrCorrupt = record.ErrCorrupt
)

// layoutFormat is the version of the key layout, kept under keyFormat. A
// directory of another version is refused rather than misread.
const layoutFormat byte = 1

// formatMajorVersion pins Pebble's on-disk format, so that a newer Pebble
// never ratchets a directory up (which older releases could not open) by
// itself: moving to a later format is a decision with its own upgrade test.
const formatMajorVersion = pebble.FormatValueSeparation

// The bounds on memory and disk (docs/serve.md, "Engines"). Memory: the
// block cache, plus at most memTableStopWrites memtables (one taking
// writes, the others waiting to be flushed; writes wait when all are
// full). Disk: leveled compaction with a size ratio of 10 between levels
// keeps the space taken by overwritten and deleted entities near a tenth
// of the live data, plus the log of the unflushed memtables.
const (
	defaultCacheBytes     = 64 << 20
	defaultMemTableBytes  = 16 << 20
	memTableStopWrites    = 4
	l0CompactionFiles     = 4
	l0StopWritesFiles     = 12
	baseLevelBytes        = 64 << 20
	bloomBitsPerKey       = 10
	maxConcurrentCompacts = 1
	defaultScanRows       = 100_000
	defaultScanTime       = 5 * time.Second
	defaultOpenTimeout    = 5 * time.Second
)

// Option configures Open.
type Option func(*config) error

type config struct {
	scanRows      int
	scanTime      time.Duration
	openTimeout   time.Duration
	cacheBytes    int64
	memTableBytes uint64
	fs            vfs.FS
	log           io.Writer
}

// WithScanBudget bounds one query page: after examining maxRows entities or
// spending maxTime, QueryEntities returns what it has with a continuation,
// as Azure does after about five seconds.
func WithScanBudget(maxRows int, maxTime time.Duration) Option {
	return func(c *config) error {
		if maxRows < 1 || maxTime <= 0 {
			return fmt.Errorf("pebblestore: invalid scan budget: %d rows, %v", maxRows, maxTime)
		}
		c.scanRows, c.scanTime = maxRows, maxTime
		return nil
	}
}

// WithOpenTimeout bounds the wait for the directory lock another process
// holds.
func WithOpenTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("pebblestore: invalid open timeout %v", d)
		}
		c.openTimeout = d
		return nil
	}
}

// WithMemory sets the block cache and the size of one memtable, in bytes.
func WithMemory(cacheBytes int64, memTableBytes uint64) Option {
	return func(c *config) error {
		if cacheBytes < 1<<20 || memTableBytes < 1<<20 {
			return fmt.Errorf("pebblestore: cache %d and memtable %d bytes: each needs at least 1 MiB", cacheBytes, memTableBytes)
		}
		c.cacheBytes, c.memTableBytes = cacheBytes, memTableBytes
		return nil
	}
}

// WithFS opens the store on another file system than the operating
// system's: Pebble's in-memory and fault-injecting ones (vfs, errorfs) for
// tests.
func WithFS(fs vfs.FS) Option {
	return func(c *config) error {
		c.fs = fs
		return nil
	}
}

// WithLog sends the engine's errors (a failed background flush or
// compaction, a write stall, the failure that stopped the store) to w
// instead of standard error.
func WithLog(w io.Writer) Option {
	return func(c *config) error {
		c.log = w
		return nil
	}
}

// Store is a store.Store on one Pebble directory. It is safe for
// concurrent use.
type Store struct {
	db       *pebble.DB
	lock     *pebble.Lock
	cache    *pebble.Cache
	scanRows int
	scanTime time.Duration
	log      io.Writer

	// writeSem serializes writes from the check of their conditions to
	// their entry in the log (not to its sync): a channel rather than a
	// mutex so that a write waiting behind a stalled engine gives up with
	// its request.
	writeSem chan struct{}
	sync     durability
	tables   *tableSet

	// failed holds the error that stopped the store (see fail).
	failed atomic.Pointer[error]

	// mu is held shared by every call and exclusively by Close, so Close
	// waits for calls in flight.
	mu     sync.RWMutex
	closed bool
}

// Open opens or creates the store in dir, creating the directory.
func Open(dir string, opts ...Option) (*Store, error) {
	cfg := config{
		scanRows:      defaultScanRows,
		scanTime:      defaultScanTime,
		openTimeout:   defaultOpenTimeout,
		cacheBytes:    defaultCacheBytes,
		memTableBytes: defaultMemTableBytes,
		fs:            vfs.Default,
		log:           os.Stderr,
	}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if err := cfg.fs.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("pebblestore: create directory: %w", err)
	}
	lock, err := lockDir(dir, cfg.fs, cfg.openTimeout)
	if err != nil {
		return nil, err
	}
	s := &Store{lock: lock, scanRows: cfg.scanRows, scanTime: cfg.scanTime, log: cfg.log, writeSem: make(chan struct{}, 1)}
	s.sync.init()
	s.cache = pebble.NewCache(cfg.cacheBytes)
	db, err := pebble.Open(dir, s.options(cfg))
	if err != nil {
		s.cache.Unref()
		return nil, errors.Join(fmt.Errorf("pebblestore: open %s: %w", dir, err), lock.Close())
	}
	s.db = db
	if err := s.initLayout(); err != nil {
		return nil, errors.Join(err, s.closeEngine())
	}
	if s.tables, err = loadTableSet(db); err != nil {
		return nil, errors.Join(err, s.closeEngine())
	}
	return s, nil
}

// options are the engine's settings: the bounds above, a Bloom filter on
// every level (an insert looks up a key that is usually absent, and the
// filter answers that without reading a block), and the pinned format.
func (s *Store) options(cfg config) *pebble.Options {
	o := &pebble.Options{
		FS:                          writtenWALFS{cfg.fs},
		Cache:                       s.cache,
		Lock:                        s.lock,
		FormatMajorVersion:          formatMajorVersion,
		MemTableSize:                cfg.memTableBytes,
		MemTableStopWritesThreshold: memTableStopWrites,
		L0CompactionThreshold:       l0CompactionFiles,
		L0StopWritesThreshold:       l0StopWritesFiles,
		LBaseMaxBytes:               baseLevelBytes,
		CompactionConcurrencyRange:  func() (int, int) { return 1, maxConcurrentCompacts },
		Logger:                      engineLogger{s},
		EventListener: &pebble.EventListener{
			BackgroundError: func(err error) { s.logf("background error (retried): %v", err) },
			DataCorruption: func(info pebble.DataCorruptionInfo) {
				s.fail(fmt.Errorf("%w: %s", ErrCorrupt, info))
			},
			WriteStallBegin: func(info pebble.WriteStallBeginInfo) {
				s.logf("writes wait for the engine: %s", info.Reason)
			},
		},
	}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(bloomBitsPerKey)
	}
	return o
}

// lockDir takes the directory's lock, waiting up to timeout for a process
// that holds it (a restart racing the old process's exit).
func lockDir(dir string, fsys vfs.FS, timeout time.Duration) (*pebble.Lock, error) {
	lock, err := retryLock(timeout, func() (*pebble.Lock, error) { return pebble.LockDirectory(dir, fsys) })
	if err != nil {
		return nil, fmt.Errorf("pebblestore: lock %s: %w", dir, err)
	}
	return lock, nil
}

// LockFile takes an exclusive lock on the file at path, creating it, with
// the operating system's file locks as Pebble takes them: released when the
// returned Closer is closed or the process ends. It waits up to timeout for
// a holder to let go, then returns ErrLocked. tablebridge serve locks its
// data directory with it, whichever engine it opens there.
func LockFile(path string, timeout time.Duration) (io.Closer, error) {
	return retryLock(timeout, func() (io.Closer, error) { return vfs.Default.Lock(path) })
}

// retryLock calls lock until it succeeds, fails for another reason than a
// lock held elsewhere, or timeout passes (ErrLocked).
func retryLock[L any](timeout time.Duration, lock func() (L, error)) (L, error) {
	deadline := time.Now().Add(timeout)
	for {
		l, err := lock()
		if err == nil {
			return l, nil
		}
		// A lock held by another process fails fcntl with EAGAIN or
		// EACCES; one held by this process, Pebble's own check. Failing
		// to create the file is a *fs.PathError.
		var pathErr *fs.PathError
		held := !errors.As(err, &pathErr) &&
			(errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EACCES) || err.Error() == "lock held by current process")
		if !held {
			return l, err
		}
		if time.Now().After(deadline) {
			return l, fmt.Errorf("%w: %v", ErrLocked, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// initLayout writes the layout version into a new directory and refuses a
// directory of another one.
func (s *Store) initLayout() error {
	v, closer, err := s.db.Get(keyFormat)
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		return s.db.Set(keyFormat, []byte{layoutFormat}, pebble.Sync)
	case err != nil:
		return fmt.Errorf("pebblestore: read layout: %w", err)
	}
	defer closer.Close()
	if len(v) != 1 || v[0] != layoutFormat {
		return fmt.Errorf("%w: unknown layout format %v", ErrCorrupt, v)
	}
	return nil
}

// Close waits for calls in flight, then closes the engine. Later calls
// return ErrClosed; closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return s.closeEngine()
}

// closeEngine closes the engine, then lets go of the directory's lock and
// the cache. After a failure the engine may refuse to close cleanly (its
// log cannot be synced); the lock is released all the same, since nothing
// more will be written through this process.
func (s *Store) closeEngine() (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("pebblestore: close: %v", v)
		}
		err = errors.Join(err, s.lock.Close())
		s.cache.Unref()
	}()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("pebblestore: close: %w", err)
	}
	return nil
}

// enter marks a call in flight, or returns ErrClosed after Close, the
// failure that stopped the store, or ctx's error when it is done. The
// caller defers s.leave when enter succeeds.
func (s *Store) enter(ctx context.Context) error {
	s.mu.RLock()
	err := ctx.Err()
	switch {
	case s.closed:
		err = ErrClosed
	case s.failed.Load() != nil:
		err = s.failure()
	}
	if err != nil {
		s.mu.RUnlock()
	}
	return err
}

// leave ends a call. A fatal error the engine raised in the caller's
// goroutine (engineLogger.Fatalf) becomes the call's error, the store
// having stopped.
func (s *Store) leave(errp *error) {
	if v := recover(); v != nil {
		f, ok := v.(fatalPanic)
		if !ok {
			s.mu.RUnlock()
			panic(v)
		}
		*errp = fmt.Errorf("%w: %v", store.ErrOutcomeUnknown, f.err)
	}
	s.mu.RUnlock()
}

// fail stops the store: the engine reported an error after which what it
// holds in memory may differ from what is on disk (a write to its log or
// its sync failed, or it found damaged data). Every later call is refused
// with store.ErrUnavailable, which names the cause, until the process
// opens the directory again: recovery then replays the log as it is on
// disk, every acknowledged write included. Going on instead could answer
// reads with writes that are not on disk, or acknowledge writes whose log
// is broken.
func (s *Store) fail(err error) {
	if s.failed.CompareAndSwap(nil, &err) {
		s.logf("stopped: %v; every request is refused until tablebridge restarts (writes acknowledged before this are on disk)", err)
		s.sync.Stop()
	}
}

// failure is the error of every call after fail.
func (s *Store) failure() error {
	return fmt.Errorf("%w: pebblestore: the store stopped after an error and must be reopened (restart tablebridge): %v", store.ErrUnavailable, *s.failed.Load())
}

func (s *Store) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "pebblestore: "+format+"\n", args...)
}

// fatalPanic carries a fatal engine error up the calling goroutine to
// leave (or to commit), in place of the process exit Pebble's default
// logger does.
type fatalPanic struct{ err error }

// engineLogger is Pebble's logger. Pebble calls Fatalf where it cannot go
// on (a commit after its log failed, a manifest it cannot write) and
// expects it not to return: it stops the store and panics instead of
// exiting, so that a request that hit it gets an answer and the server
// keeps running to say why it refuses the rest. A Fatalf on one of
// Pebble's own goroutines still ends the process, with that message.
type engineLogger struct{ s *Store }

func (l engineLogger) Infof(string, ...any) {}

func (l engineLogger) Errorf(format string, args ...any) { l.s.logf(format, args...) }

func (l engineLogger) Fatalf(format string, args ...any) {
	err := fmt.Errorf("pebble: "+format, args...)
	l.s.fail(err)
	panic(fatalPanic{err})
}
