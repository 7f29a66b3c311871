package loadgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestBucketBounds(t *testing.T) {
	t.Parallel()
	// Every value lies in its bucket, buckets are ordered, and a bucket is
	// never wider than 1/subBuckets of its values.
	check := func(v uint64) {
		i := bucketIndex(v)
		if i < 0 || i >= bucketCount {
			t.Fatalf("value %d: bucket %d out of range", v, i)
		}
		upper := bucketUpper(i)
		if v > upper {
			t.Fatalf("value %d above its bucket's upper edge %d", v, upper)
		}
		if i > 0 && v <= bucketUpper(i-1) {
			t.Fatalf("value %d not above the previous bucket's edge %d", v, bucketUpper(i-1))
		}
		if v >= linearLimit && float64(upper-v) > float64(v)/subBuckets {
			t.Fatalf("value %d: bucket edge %d too far", v, upper)
		}
	}
	for v := uint64(0); v < 100_000; v++ {
		check(v)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100_000 {
		check(rng.Uint64() >> rng.UintN(64))
	}
	check(math.MaxUint64)
	if bucketIndex(math.MaxUint64) != bucketCount-1 {
		t.Fatalf("the largest value is not in the last bucket")
	}
}

func TestHistogramQuantiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		values []time.Duration
	}{
		{"uniform 1..10000 µs", func() []time.Duration {
			var v []time.Duration
			for i := 1; i <= 10_000; i++ {
				v = append(v, time.Duration(i)*time.Microsecond)
			}
			return v
		}()},
		{"exact small values", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"one value", []time.Duration{42 * time.Millisecond}},
		{"long tail", func() []time.Duration {
			rng := rand.New(rand.NewPCG(7, 8))
			var v []time.Duration
			for range 20_000 {
				v = append(v, time.Duration(rng.ExpFloat64()*float64(5*time.Millisecond)))
			}
			return append(v, 3*time.Second)
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHistogram()
			for _, v := range c.values {
				h.Record(v)
			}
			sorted := slices.Clone(c.values)
			slices.Sort(sorted)
			if h.Count() != uint64(len(sorted)) || h.Min() != sorted[0] || h.Max() != sorted[len(sorted)-1] {
				t.Fatalf("count/min/max %d/%v/%v, want %d/%v/%v", h.Count(), h.Min(), h.Max(), len(sorted), sorted[0], sorted[len(sorted)-1])
			}
			for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
				rank := int(math.Ceil(q*float64(len(sorted)))) - 1
				exact := sorted[rank]
				got := h.Quantile(q)
				// Never below the exact value, and within a bucket's width above.
				if got < exact || float64(got-exact) > float64(exact)/subBuckets+1 {
					t.Errorf("q%.3f = %v, exact %v", q, got, exact)
				}
			}
			if h.Quantile(0) != sorted[0] || h.Quantile(1) != sorted[len(sorted)-1] {
				t.Errorf("q0/q1 = %v/%v", h.Quantile(0), h.Quantile(1))
			}
		})
	}
}

func TestHistogramMergeAndEmpty(t *testing.T) {
	t.Parallel()
	empty := NewHistogram()
	if empty.Quantile(0.5) != 0 || empty.Mean() != 0 || empty.Max() != 0 {
		t.Fatal("an empty histogram reports nonzero figures")
	}
	a, b, all := NewHistogram(), NewHistogram(), NewHistogram()
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i) * 37 * time.Microsecond
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
		all.Record(d)
	}
	a.Merge(b)
	a.Merge(empty)
	if *a != *all {
		t.Fatal("merged histogram differs from recording everything in one")
	}
	empty.Merge(all)
	if *empty != *all {
		t.Fatal("merging into an empty histogram lost values")
	}
	neg := NewHistogram()
	neg.Record(-time.Second)
	if neg.Min() != 0 || neg.Count() != 1 {
		t.Fatal("a negative duration is not recorded as zero")
	}
}
