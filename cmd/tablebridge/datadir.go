package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/pebblestore"
)

// A data directory holds the embedded store: a Pebble directory (the
// engine of new data directories), or the bbolt file of an earlier
// release. One process at a time uses a directory, whichever engine it
// opens: it holds tablebridge.lock (and the engine its own lock too, the
// only one of earlier releases), and writes its pid and subcommand to
// tablebridge.pid so that another one can say who has it, at once, instead
// of waiting out a lock timeout.
const (
	dataFileName  = "tablebridge.db" // the bolt store's file
	pebbleDirName = "pebble"         // the pebble store's directory
	lockFileName  = "tablebridge.lock"
	pidFileName   = "tablebridge.pid"
	// lockWait is how long to wait for another process's lock: long enough
	// for a restart racing the old process's exit, short enough to answer
	// at once.
	lockWait = 300 * time.Millisecond
)

// The engines of a data directory, as -store names them. engineAuto picks
// the one the directory holds (dataDirEngine).
const (
	engineAuto   = "auto"
	enginePebble = "pebble"
	engineBolt   = "bolt"
)

// dataDirEngine is the engine of dir's data: bolt when it holds the bbolt
// file of an earlier release (which keeps being served as it is, see
// docs/serve.md), else pebble, for a new directory too.
func dataDirEngine(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, dataFileName)); err == nil {
		return engineBolt
	}
	return enginePebble
}

// dataDirStore is the embedded store of a data directory, held by this
// process until Close.
type dataDirStore struct {
	store.Store
	engine  string // enginePebble or engineBolt
	path    string // the bbolt file or the Pebble directory, absolute
	pidFile string
	lock    io.Closer // the directory's lock
}

// describe names the engine and where its data is, as serve and the
// checkpoints show it.
func (d *dataDirStore) describe() string { return d.engine + " " + d.path }

// Accounts lists the accounts that hold tables or service properties.
func (d *dataDirStore) Accounts(ctx context.Context) ([]string, error) {
	return d.Store.(interface {
		Accounts(context.Context) ([]string, error)
	}).Accounts(ctx)
}

// openDataDir opens the engine's store in dir for cmd (serve, migrate,
// ...), creating it unless mustExist (a command that only reads it). When
// another process holds it, the error names the directory and, when it is
// a tablebridge, its pid and subcommand. boltOpts apply to the bolt store.
func openDataDir(dir, engine, cmd string, mustExist bool, boltOpts ...boltstore.Option) (*dataDirStore, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d := &dataDirStore{engine: engine, pidFile: filepath.Join(abs, pidFileName)}
	var locked error
	switch engine {
	case engineBolt:
		d.path, locked = filepath.Join(abs, dataFileName), boltstore.ErrLocked
	case enginePebble:
		d.path, locked = filepath.Join(abs, pebbleDirName), pebblestore.ErrLocked
	default:
		return nil, fmt.Errorf("unknown store engine %q", engine)
	}
	if _, err := os.Stat(d.path); mustExist && errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("data directory %s holds no tablebridge data for -store %s (no %s)", dir, engine, filepath.Base(d.path))
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	inUse := func() error {
		return fmt.Errorf("data directory %s is in use by %s; stop it or use another -data directory", dir, dataDirHolder(abs))
	}
	if d.lock, err = pebblestore.LockFile(filepath.Join(abs, lockFileName), lockWait); errors.Is(err, pebblestore.ErrLocked) {
		return nil, inUse()
	} else if err != nil {
		return nil, err
	}
	if engine == engineBolt {
		d.Store, err = boltstore.Open(d.path, append(boltOpts, boltstore.WithOpenTimeout(lockWait))...)
	} else {
		d.Store, err = pebblestore.Open(d.path, pebblestore.WithOpenTimeout(lockWait))
	}
	if err != nil {
		d.lock.Close()
		if errors.Is(err, locked) {
			// An earlier release, which takes the engine's lock only.
			return nil, inUse()
		}
		return nil, err
	}
	// Best effort: the locks are what protect the data; the pid file only
	// names its holder.
	_ = os.WriteFile(d.pidFile, fmt.Appendf(nil, "%d %s\n", os.Getpid(), cmd), 0o644)
	return d, nil
}

// Close closes the store, removes the pid file and lets go of the
// directory.
func (d *dataDirStore) Close() error {
	err := d.Store.Close()
	if b, rerr := os.ReadFile(d.pidFile); rerr == nil && pidOf(string(b)) == os.Getpid() {
		os.Remove(d.pidFile)
	}
	return errors.Join(err, d.lock.Close())
}

// dataDirHolder describes the process holding the directory's lock from
// its pid file.
func dataDirHolder(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, pidFileName))
	if pid := pidOf(string(b)); err == nil && pid > 0 {
		_, cmd, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		if cmd != "" {
			return fmt.Sprintf("another tablebridge (pid %d, %s)", pid, cmd)
		}
		return fmt.Sprintf("another tablebridge (pid %d)", pid)
	}
	return "another process (a tablebridge serve, migrate or import?)"
}

func pidOf(s string) int {
	field, _, _ := strings.Cut(strings.TrimSpace(s), " ")
	pid, err := strconv.Atoi(field)
	if err != nil {
		return 0
	}
	return pid
}
