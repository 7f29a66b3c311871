package dynamoproxy

import (
	"math"
	"sync"
	"time"
)

// What one partition takes per second on AWS, in both capacity modes: at
// most 3,000 read units and 1,000 write units ("Best practices for
// designing and using partition keys effectively", Developer Guide). Tests
// scale them down.
const (
	PartitionReadUnits  = 3000
	PartitionWriteUnits = 1000
)

// Capacity is the capacity model: a token bucket of read units and one of
// write units for every key (table or index, partition key value). Zero
// units mean no limit, so the zero Capacity only counts.
type Capacity struct {
	ReadUnits  float64 // per key per second
	WriteUnits float64 // per key per second
	// Burst is how many seconds of units a bucket holds (and starts with);
	// 0 means one second.
	Burst time.Duration
}

// Clock tells the capacity model the time; tests give one they advance by
// hand. Delays of faults run on real time.
type Clock interface {
	Now() time.Time
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

type bucketID struct {
	key   Key
	write bool
}

type bucket struct {
	tokens float64
	at     time.Time
}

// buckets holds the model's buckets. A request may proceed while every
// bucket it needs holds more than zero units; it is charged after its
// answer, with the units DynamoDB counted, so a bucket can go below zero and
// the requests after it wait until it refills. Over any interval a key
// passes at most its burst plus its rate times the interval, plus what the
// requests admitted at the last positive moment took.
type buckets struct {
	capacity Capacity
	clock    Clock

	mu sync.Mutex
	m  map[bucketID]*bucket
}

func (b *buckets) rate(write bool) float64 {
	if write {
		return b.capacity.WriteUnits
	}
	return b.capacity.ReadUnits
}

func (b *buckets) burst(write bool) float64 {
	d := b.capacity.Burst
	if d <= 0 {
		d = time.Second
	}
	return b.rate(write) * d.Seconds()
}

// refilled returns id's bucket brought up to now; callers hold mu.
func (b *buckets) refilled(id bucketID, now time.Time) *bucket {
	bk := b.m[id]
	if bk == nil {
		if b.m == nil {
			b.m = map[bucketID]*bucket{}
		}
		bk = &bucket{tokens: b.burst(id.write), at: now}
		b.m[id] = bk
		return bk
	}
	if elapsed := now.Sub(bk.at).Seconds(); elapsed > 0 {
		bk.tokens = math.Min(b.burst(id.write), bk.tokens+elapsed*b.rate(id.write))
		bk.at = now
	}
	return bk
}

// empty returns the ids, among those given, whose buckets hold no units.
func (b *buckets) empty(ids []bucketID) []bucketID {
	var out []bucketID
	now := b.clock.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range ids {
		if b.rate(id.write) <= 0 {
			continue
		}
		if b.refilled(id, now).tokens <= 0 {
			out = append(out, id)
		}
	}
	return out
}

// take charges units to id's bucket.
func (b *buckets) take(id bucketID, units float64) {
	if b.rate(id.write) <= 0 || units <= 0 {
		return
	}
	now := b.clock.Now()
	b.mu.Lock()
	b.refilled(id, now).tokens -= units
	b.mu.Unlock()
}
