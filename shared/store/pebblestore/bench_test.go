package pebblestore

import (
	"testing"

	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

// openBench opens a store in a temporary directory with the default
// memory bounds, as serve runs it.
func openBench(b *testing.B) *Store {
	s, _ := openTemp(b, WithMemory(defaultCacheBytes, defaultMemTableBytes))
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkInsertParallel(b *testing.B) { storetest.BenchInsertParallel(b, openBench(b)) }

func BenchmarkInsertSerial(b *testing.B) { storetest.BenchInsertSerial(b, openBench(b)) }

func BenchmarkGet(b *testing.B) { storetest.BenchGet(b, openBench(b)) }

func BenchmarkScanPartition(b *testing.B) { storetest.BenchScanPartition(b, openBench(b)) }
