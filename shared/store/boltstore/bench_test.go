package boltstore

import (
	"testing"

	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

// openBench opens a store in a temporary directory, as serve runs it.
func openBench(b *testing.B, opts ...Option) *Store {
	s, _ := openTemp(b, opts...)
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkInsertParallel(b *testing.B) {
	b.Run("default", func(b *testing.B) { storetest.BenchInsertParallel(b, openBench(b)) })
	// One write per commit: what group commit saves.
	b.Run("batch=1", func(b *testing.B) { storetest.BenchInsertParallel(b, openBench(b, WithMaxBatch(1))) })
}

func BenchmarkInsertSerial(b *testing.B) { storetest.BenchInsertSerial(b, openBench(b)) }

func BenchmarkGet(b *testing.B) { storetest.BenchGet(b, openBench(b)) }

func BenchmarkScanPartition(b *testing.B) { storetest.BenchScanPartition(b, openBench(b)) }
