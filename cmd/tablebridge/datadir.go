package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

// A data directory holds the bbolt file of the embedded store. bbolt locks
// the file while it is open, so one process at a time uses a directory; the
// holder writes its pid and subcommand to tablebridge.pid so that another
// one can say who has it, at once, instead of waiting out a lock timeout.
const (
	dataFileName = "tablebridge.db"
	pidFileName  = "tablebridge.pid"
	// lockWait is how long to wait for another process's lock: long enough
	// for a restart racing the old process's exit, short enough to answer
	// at once.
	lockWait = 300 * time.Millisecond
)

// dataDirStore is the embedded store of a data directory, held by this
// process until Close.
type dataDirStore struct {
	*boltstore.Store
	path    string // the bbolt file, absolute
	pidFile string
}

// openDataDir opens the store of dir for cmd (serve, migrate, ...),
// creating it unless mustExist (a command that only reads it). When another
// process holds it, the error names the directory and, when it is a
// tablebridge, its pid and subcommand.
func openDataDir(dir, cmd string, mustExist bool, opts ...boltstore.Option) (*dataDirStore, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(abs, dataFileName)
	if _, err := os.Stat(path); mustExist && errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("data directory %s holds no tablebridge data (no %s)", dir, dataFileName)
	}
	st, err := boltstore.Open(path, append(opts, boltstore.WithOpenTimeout(lockWait))...)
	if errors.Is(err, boltstore.ErrLocked) {
		return nil, fmt.Errorf("data directory %s is in use by %s; stop it or use another -data directory", dir, dataDirHolder(abs))
	}
	if err != nil {
		return nil, err
	}
	d := &dataDirStore{Store: st, path: path, pidFile: filepath.Join(abs, pidFileName)}
	// Best effort: the lock is what protects the file; the pid file only
	// names its holder.
	_ = os.WriteFile(d.pidFile, fmt.Appendf(nil, "%d %s\n", os.Getpid(), cmd), 0o644)
	return d, nil
}

// Close closes the store, then removes the pid file.
func (d *dataDirStore) Close() error {
	err := d.Store.Close()
	if b, rerr := os.ReadFile(d.pidFile); rerr == nil && pidOf(string(b)) == os.Getpid() {
		os.Remove(d.pidFile)
	}
	return err
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
