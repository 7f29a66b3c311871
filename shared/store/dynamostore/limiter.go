package dynamostore

import (
	"sync"
	"time"
)

// rateLimiter spaces out work to at most perSecond units a second, for any
// number of goroutines.
type rateLimiter struct {
	interval time.Duration
	mu       sync.Mutex
	next     time.Time
}

func newRateLimiter(perSecond int) *rateLimiter {
	return &rateLimiter{interval: time.Second / time.Duration(max(perSecond, 1))}
}

// free is when the next units may be used (the past when now).
func (l *rateLimiter) free() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.next
}

// bookAt books n units from start, no earlier than what is booked.
func (l *rateLimiter) bookAt(start time.Time, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next = later(l.next, start).Add(time.Duration(n) * l.interval)
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// idle reports whether nothing is booked after now.
func (l *rateLimiter) idle(now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.next.After(now)
}

// keyLimiter holds each key (a DynamoDB partition key) to perSecond units a
// second: DynamoDB takes at most 1,000 write units a second on one, and
// work spread over many keys must not pile onto one of them.
type keyLimiter struct {
	perSecond int
	mu        sync.Mutex
	keys      map[string]*rateLimiter
}

func newKeyLimiter(perSecond int) *keyLimiter {
	return &keyLimiter{perSecond: perSecond, keys: map[string]*rateLimiter{}}
}

// maxLimitedKeys bounds the keys a keyLimiter remembers; past it, keys
// whose booked time has passed are forgotten (their next use starts fresh,
// which is what they would see anyway).
const maxLimitedKeys = 10_000

// limiter returns key's limiter; the caller holds mu.
func (k *keyLimiter) limiter(now time.Time, key string) *rateLimiter {
	l := k.keys[key]
	if l == nil {
		if len(k.keys) >= maxLimitedKeys {
			for key, l := range k.keys {
				if l.idle(now) {
					delete(k.keys, key)
				}
			}
		}
		l = newRateLimiter(k.perSecond)
		k.keys[key] = l
	}
	return l
}

// reserveTogether books what one request takes: n units of overall, and
// units[key] of each key, all for the first moment every one of them has
// room, and returns how long to wait for it. Booked one by one, each at
// its own first free moment, a request held back by its busiest key would
// reach the others later than booked, at once with the requests booked
// after it, and pass their rate. overall must be used through this
// keyLimiter alone.
func (k *keyLimiter) reserveTogether(now time.Time, overall *rateLimiter, n int, units map[string]int) time.Duration {
	k.mu.Lock()
	defer k.mu.Unlock()
	start := later(now, overall.free())
	limiters := make(map[*rateLimiter]int, len(units))
	for key, u := range units {
		l := k.limiter(now, key)
		limiters[l] = u
		start = later(start, l.free())
	}
	overall.bookAt(start, n)
	for l, u := range limiters {
		l.bookAt(start, u)
	}
	return start.Sub(now)
}
