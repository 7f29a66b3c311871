package storetest_test

import (
	"context"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
	"github.com/tablebridge/tablebridge/shared/store/pebblestore"
)

// heldStores are the stores of the local server, opened as serve opens
// them, with their data in dir.
var heldStores = []struct {
	name string
	open func(dir string) (store.Store, error)
}{
	{"memory", func(string) (store.Store, error) { return memstore.New() }},
	{"pebble", func(dir string) (store.Store, error) {
		return pebblestore.Open(filepath.Join(dir, "pebble"), pebblestore.WithLog(io.Discard))
	}},
	{"bolt", func(dir string) (store.Store, error) { return boltstore.Open(filepath.Join(dir, "tablebridge.db")) }},
}

// BenchmarkHeldEntities measures what each store of the local server costs
// in memory to hold entities shaped like the load generator's (ten
// properties of every Edm type, about 500 bytes of JSON as a client sends
// it), inserted one write at a time: the Go heap per entity, which the
// garbage collector traces, and the resident memory per entity (the heap,
// the engine's own memory outside it, and the pages of a memory-mapped
// file); and the time of one full garbage collection with them held, which
// every collection pays again. -bench.entities sets how many (100,000).
// They are written in transactions of 100, one partition each, so the
// durable stores' syncs do not make the run long. Run one store per
// process (-bench HeldEntities/pebble) for the resident figure: memory
// another store freed may not have gone back to the system yet.
//
//	go test -run '^$' -bench HeldEntities ./shared/store/storetest
func BenchmarkHeldEntities(b *testing.B) {
	for _, st := range heldStores {
		b.Run(st.name, func(b *testing.B) {
			ctx := context.Background()
			for range b.N {
				s, err := st.open(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.CreateTable(ctx, "acct", "t"); err != nil {
					b.Fatal(err)
				}
				var before, after runtime.MemStats
				debug.FreeOSMemory()
				runtime.ReadMemStats(&before)
				rssBefore := residentBytes(b)
				writeHeld(b, s, *heldEntities)
				debug.FreeOSMemory()
				runtime.ReadMemStats(&after)
				rss := residentBytes(b) - rssBefore
				start := time.Now()
				runtime.GC()
				gc := time.Since(start)
				n := float64(*heldEntities)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/entity")
				b.ReportMetric(float64(rss)/n, "rss-B/entity")
				b.ReportMetric(float64(gc.Microseconds()), "gc-µs")
				runtime.KeepAlive(s)
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDiskPerMillion writes a million entities of the same shape into
// each durable store, in transactions of 100 as a migration or an import
// writes them, and reports the bytes its data takes on disk once it is
// closed, and again once it is opened and closed again (Pebble then has
// flushed what its log held).
//
//	go test -run '^$' -bench DiskPerMillion -benchtime 1x -timeout 30m ./shared/store/storetest
func BenchmarkDiskPerMillion(b *testing.B) {
	const n = 1_000_000
	for _, st := range heldStores[1:] {
		b.Run(st.name, func(b *testing.B) {
			ctx := context.Background()
			for range b.N {
				dir := b.TempDir()
				s, err := st.open(dir)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := s.CreateTable(ctx, "acct", "t"); err != nil {
					b.Fatal(err)
				}
				writeHeld(b, s, n)
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				closed := dirBytes(b, dir)
				if s, err = st.open(dir); err != nil {
					b.Fatal(err)
				}
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(closed), "disk-B/million")
				b.ReportMetric(float64(dirBytes(b, dir)), "reopened-disk-B/million")
			}
		})
	}
}

// writeHeld inserts n entities into table t of account acct in writes of
// 100 entities of one partition, as an entity group transaction holds.
func writeHeld(b *testing.B, s store.Store, n int) {
	ops := make([]store.Op, 0, 100)
	for i := range n {
		ops = append(ops, store.Op{Kind: store.OpInsert, Entity: heldEntity(i)})
		if len(ops) == cap(ops) || i == n-1 {
			if err := s.Write(context.Background(), "acct", "t", ops); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
}

var heldEntities = flag.Int("bench.entities", 100_000, "entities BenchmarkHeldEntities holds")

func heldEntity(i int) *model.Entity {
	return &model.Entity{
		PartitionKey: "i0003-" + strconv.Itoa(i/100),
		RowKey:       strconv.Itoa(1_000_000_000 + i),
		Timestamp:    time.Now(),
		Properties: map[string]edm.Value{
			"Name":    edm.NewString("name-" + strconv.Itoa(i)),
			"City":    edm.NewString("Amsterdam"),
			"Active":  edm.NewBoolean(i%2 == 0),
			"Count":   edm.NewInt32(int32(i)),
			"Total":   edm.NewInt64(int64(i) << 20),
			"Price":   edm.NewDouble(float64(i) / 7),
			"Created": edm.NewDateTime(time.Unix(int64(i), 0).UTC()),
			"Ref":     edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"),
			"Blob":    edm.NewBinary([]byte("0123456789abcdef")),
			"Payload": edm.NewString(strings.Repeat("x", 100)),
		},
	}
}

// residentBytes is the process's resident set (VmRSS).
func residentBytes(b *testing.B) int64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status: resident memory is measured on Linux")
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc/self/status")
	return 0
}

// dirBytes sums the disk space dir's files take, as du counts it: the
// blocks allocated, so a file grown ahead of its data counts what it
// holds on disk.
func dirBytes(b *testing.B, dir string) int64 {
	var total int64
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		} else {
			total += info.Size()
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}
