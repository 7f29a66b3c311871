package loadgen

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records durations in log-linear buckets, in the manner of an HDR
// histogram: values below 2*subBuckets nanoseconds are exact, and above that
// every power of two is split into subBuckets equal buckets, so a recorded
// value is known to within 1/subBuckets (0.8%) of itself. Recording is an
// index computation and an increment: no allocation, no lock. A Histogram is
// not safe for concurrent use; give each worker its own and Merge them.
type Histogram struct {
	counts [bucketCount]uint64
	n      uint64
	sum    uint64
	min    uint64
	max    uint64
}

const (
	subBucketBits = 7
	subBuckets    = 1 << subBucketBits // buckets per power of two
	linearLimit   = 2 * subBuckets     // values below this are exact
	// Shifts run from 1 (values 256..511) to 56 (values up to 2^64-1).
	bucketCount = linearLimit + (64-subBucketBits-1)*subBuckets
)

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram { return &Histogram{} }

func bucketIndex(v uint64) int {
	if v < linearLimit {
		return int(v)
	}
	shift := bits.Len64(v) - (subBucketBits + 1) // >= 1
	top := v >> shift                            // in [subBuckets, 2*subBuckets)
	return linearLimit + (shift-1)*subBuckets + int(top-subBuckets)
}

// bucketUpper returns the largest value that falls into bucket i.
func bucketUpper(i int) uint64 {
	if i < linearLimit {
		return uint64(i)
	}
	shift := (i-linearLimit)/subBuckets + 1
	top := uint64((i-linearLimit)%subBuckets + subBuckets)
	return (top+1)<<shift - 1
}

// Record adds one duration. Negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := uint64(0)
	if d > 0 {
		v = uint64(d)
	}
	h.counts[bucketIndex(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += v
}

// Merge adds every value recorded in o.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	h.sum += o.sum
}

// Count returns the number of recorded values.
func (h *Histogram) Count() uint64 { return h.n }

// Min and Max return the exact extremes (0 when empty).
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max returns the largest recorded value.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the exact mean (0 when empty).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / h.n)
}

// Quantile returns the value at quantile q in [0, 1]: the upper edge of the
// bucket holding the ceil(q*n)-th smallest value, clamped to the exact
// minimum and maximum. Reporting the upper edge means a percentile is never
// understated by the bucketing.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	if q <= 0 {
		return time.Duration(h.min)
	}
	if q >= 1 {
		return time.Duration(h.max)
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	if rank < 1 {
		rank = 1
	}
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			v := bucketUpper(i)
			v = max(v, h.min)
			v = min(v, h.max)
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}
