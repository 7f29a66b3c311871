package boltstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tablebridge/tablebridge/shared/store"
)

var _ store.Store = (*Store)(nil)

// ErrClosed is returned by every method called after Close.
var ErrClosed = errors.New("boltstore: store is closed")

// ErrLocked is returned by Open when another process (or another Open in
// this one) holds the file: bbolt locks it for as long as it is open.
var ErrLocked = errors.New("boltstore: the file is open in another process")

// Bucket and key names of the layout (see the package doc).
var (
	bucketMeta     = []byte("meta")
	bucketAccounts = []byte("accounts")
	bucketCatalog  = []byte("catalog")
	bucketTables   = []byte("tables")
	keyFormat      = []byte("format")
	keyService     = []byte("service")
)

// layoutFormat is the version of the bucket layout, kept in meta/format. A
// file of another version is refused rather than misread.
const layoutFormat byte = 1

// Defaults. A group commit takes at most defaultMaxBatchSize writes (see
// committer.go for how groups form).
const (
	defaultMaxBatchSize    = 256
	defaultScanRows        = 100_000
	defaultScanTime        = 5 * time.Second
	defaultOpenTimeout     = 5 * time.Second
	defaultInitialMmapSize = 256 << 20
)

// Option configures Open.
type Option func(*config) error

type config struct {
	maxBatchSize    int
	scanRows        int
	scanTime        time.Duration
	openTimeout     time.Duration
	initialMmapSize int
	onCommit        func(writes int, took time.Duration)
}

// WithMaxBatch sets how many writes one group commit takes at most.
func WithMaxBatch(maxSize int) Option {
	return func(c *config) error {
		if maxSize < 1 {
			return fmt.Errorf("boltstore: invalid batch size %d", maxSize)
		}
		c.maxBatchSize = maxSize
		return nil
	}
}

// WithScanBudget bounds one query page: after examining maxRows entities or
// spending maxTime, QueryEntities returns what it has with a continuation,
// as Azure does after about five seconds. The row bound also keeps read
// transactions short, which matters because a long reader delays writers
// that need to grow the memory map.
func WithScanBudget(maxRows int, maxTime time.Duration) Option {
	return func(c *config) error {
		if maxRows < 1 || maxTime <= 0 {
			return fmt.Errorf("boltstore: invalid scan budget: %d rows, %v", maxRows, maxTime)
		}
		c.scanRows, c.scanTime = maxRows, maxTime
		return nil
	}
}

// WithCommitObserver has fn called after every group commit with the
// number of writes it took (calls of Write, each one transaction of its
// own in the caller's eyes) and how long the bbolt transaction took, fsyncs
// included. It runs on the committer's goroutine, between commits, so it
// must be quick. The local server exports both as metrics: how well writes
// share their fsyncs is what durable insert throughput comes down to.
func WithCommitObserver(fn func(writes int, took time.Duration)) Option {
	return func(c *config) error {
		c.onCommit = fn
		return nil
	}
}

// WithOpenTimeout bounds the wait for the file lock another process holds.
func WithOpenTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return fmt.Errorf("boltstore: invalid open timeout %v", d)
		}
		c.openTimeout = d
		return nil
	}
}

// WithInitialMmapSize sets the initial memory map size in bytes. A map
// large enough for the file means readers never block a writer that grows
// it. The file itself still grows only as data is written.
func WithInitialMmapSize(n int) Option {
	return func(c *config) error {
		if n < 0 {
			return fmt.Errorf("boltstore: invalid initial mmap size %d", n)
		}
		c.initialMmapSize = n
		return nil
	}
}

// Store is a store.Store on one bbolt file. It is safe for concurrent use.
type Store struct {
	db       *bolt.DB
	commits  *committer
	durable  *store.Durable // the commits on disk, by transaction id
	scanRows int
	scanTime time.Duration

	// mu is held shared by every call and exclusively by Close, so Close
	// waits for calls in flight, writes in a pending batch included.
	mu     sync.RWMutex
	closed bool
}

// Open opens or creates the store file at path, creating its directory.
func Open(path string, opts ...Option) (*Store, error) {
	cfg := config{
		maxBatchSize:    defaultMaxBatchSize,
		scanRows:        defaultScanRows,
		scanTime:        defaultScanTime,
		openTimeout:     defaultOpenTimeout,
		initialMmapSize: defaultInitialMmapSize,
	}
	for _, opt := range opts {
		if err := opt(&cfg); err != nil {
			return nil, err
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("boltstore: create directory: %w", err)
		}
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: cfg.openTimeout,
		// Not syncing the freelist saves a page write per commit; bbolt
		// rebuilds it by scanning the file on open. Commits stay durable.
		NoFreelistSync:  true,
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: cfg.initialMmapSize,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	if err := initLayout(db); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	var last int
	if err := db.View(func(tx *bolt.Tx) error { last = tx.ID(); return nil }); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	durable := store.NewDurable(uint64(last))
	return &Store{db: db, commits: newCommitter(db, durable, cfg.maxBatchSize, cfg.onCommit), durable: durable, scanRows: cfg.scanRows, scanTime: cfg.scanTime}, nil
}

// view runs fn in a read transaction and returns once the commit it read
// is on disk. bbolt writes a commit's meta page, which every transaction
// begun after sees, and only then syncs it (tx.writeMeta releases the meta
// lock before its fdatasync): a read begun in between could otherwise
// answer with a write that a power loss takes back. Its answer, whatever
// it is, waits for the commit's sync, as the writer's does.
func (s *Store) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	var seen int
	err := s.db.View(func(tx *bolt.Tx) error {
		seen = tx.ID()
		return fn(tx)
	})
	if werr := s.durable.Wait(ctx, uint64(seen)); werr != nil {
		return werr
	}
	return err
}

// update runs fn in a read-write transaction of its own (the table
// operations, which the committer does not group) and records its commit
// on disk once bbolt's Update has synced it.
func (s *Store) update(fn func(*bolt.Tx) error) error {
	return updateSynced(s.db, s.durable, fn)
}

// updateSynced runs fn in a read-write transaction and, once it is
// committed and synced, records its id in durable. bbolt runs one
// read-write transaction at a time, each synced before the next begins,
// so transaction ids are synced in their order.
func updateSynced(db *bolt.DB, durable *store.Durable, fn func(*bolt.Tx) error) error {
	var id int
	err := db.Update(func(tx *bolt.Tx) error {
		id = tx.ID()
		return fn(tx)
	})
	if err == nil {
		durable.Synced(uint64(id))
	}
	return err
}

// initLayout creates the top-level buckets of a new file and refuses a file
// of an unknown layout.
func initLayout(db *bolt.DB) error {
	return db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists(bucketMeta)
		if err != nil {
			return fmt.Errorf("boltstore: init: %w", err)
		}
		switch v := meta.Get(keyFormat); {
		case v == nil:
			if err := meta.Put(keyFormat, []byte{layoutFormat}); err != nil {
				return fmt.Errorf("boltstore: init: %w", err)
			}
		case len(v) != 1 || v[0] != layoutFormat:
			return fmt.Errorf("%w: unknown layout format %v", ErrCorrupt, v)
		}
		if _, err := tx.CreateBucketIfNotExists(bucketAccounts); err != nil {
			return fmt.Errorf("boltstore: init: %w", err)
		}
		return nil
	})
}

// Close waits for calls in flight, then closes the file. Later calls return
// ErrClosed; closing twice is harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	s.commits.close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("boltstore: close: %w", err)
	}
	return nil
}

// enter marks a call in flight, or returns ErrClosed after Close or ctx's
// error when it is done; the caller must call s.leave when enter succeeds.
func (s *Store) enter(ctx context.Context) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		s.mu.RUnlock()
		return err
	}
	return nil
}

func (s *Store) leave() { s.mu.RUnlock() }

// accountBucket returns the account's bucket, or nil when the account has
// none yet.
func accountBucket(tx *bolt.Tx, account string) *bolt.Bucket {
	if account == "" {
		return nil
	}
	return tx.Bucket(bucketAccounts).Bucket([]byte(account))
}

// entityBucket returns the table's entity bucket, or nil when there is no
// such table.
func entityBucket(tx *bolt.Tx, account, table string) *bolt.Bucket {
	acct := accountBucket(tx, account)
	if acct == nil || table == "" {
		return nil
	}
	tables := acct.Bucket(bucketTables)
	if tables == nil {
		return nil
	}
	return tables.Bucket(tableKey(table))
}
