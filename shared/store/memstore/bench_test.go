package memstore

import (
	"context"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// BenchmarkHeldEntities measures what the store costs to hold entities
// shaped like the load generator's (ten properties of every Edm type,
// about 500 bytes of JSON as a client sends it): the heap per entity, and
// the time of one full garbage collection with them held, which every
// collection pays again.
//
//	go test -run '^$' -bench HeldEntities ./shared/store/memstore
func BenchmarkHeldEntities(b *testing.B) {
	const n = 100_000
	ctx := context.Background()
	for range b.N {
		s, err := New()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.CreateTable(ctx, "acct", "t"); err != nil {
			b.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for i := range n {
			e := heldEntity(i)
			if err := s.Write(ctx, "acct", "t", []store.Op{{Kind: store.OpInsert, Entity: e}}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		start := time.Now()
		runtime.GC()
		gc := time.Since(start)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "heap-B/entity")
		b.ReportMetric(float64(gc.Microseconds()), "gc-µs")
		runtime.KeepAlive(s)
	}
}

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
			"Payload": edm.NewString("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
		},
	}
}
