package pebblestore

import (
	"github.com/cockroachdb/pebble/v2/vfs"
)

// walCategory is the disk-write category Pebble names its write-ahead
// log files with (wal.StandaloneManager's Create and ReuseForWrite).
const walCategory vfs.DiskWriteCategory = "pebble-wal"

// writtenWALFS is the engine's file system with one change: the
// write-ahead log's preallocation writes zeros where the default reserves
// blocks without growing the file (fallocate with FALLOC_FL_KEEP_SIZE).
// A log that grows with every record makes every fdatasync, the one each
// acknowledged write waits for, write the file's size too, which costs
// several times a sync over blocks the file already has (docs/performance.md,
// "The local server's engines").
// Pebble reads the zeros after a log's last record as its end, as it reads
// what preallocation and log recycling leave ("zeroed chunk").
type writtenWALFS struct{ vfs.FS }

func (fs writtenWALFS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, category)
	return writtenWAL(f, category), err
}

func (fs writtenWALFS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, category)
	return writtenWAL(f, category), err
}

func writtenWAL(f vfs.File, category vfs.DiskWriteCategory) vfs.File {
	if f == nil || category != walCategory {
		return f
	}
	return &writtenFile{File: f}
}

// writtenFile is a write-ahead log file whose preallocation writes zeros.
type writtenFile struct{ vfs.File }

// zeros is what writtenFile.Preallocate writes at a time.
var zeros = make([]byte, 1<<20)

// Preallocate writes zeros over [offset, offset+length) past the file's
// current end, and syncs them, so the records written there later
// overwrite blocks the file already has.
func (f *writtenFile) Preallocate(offset, length int64) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	from, end := max(offset, info.Size()), offset+length
	if from >= end {
		return nil
	}
	for off := from; off < end; {
		n := min(int64(len(zeros)), end-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return f.SyncData()
}
