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

// reserve books n units and returns how long to wait before using them.
func (l *rateLimiter) reserve(now time.Time, n int) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.next.Before(now) {
		l.next = now
	}
	d := l.next.Sub(now)
	l.next = l.next.Add(time.Duration(n) * l.interval)
	return d
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

// reserve books n units of key and returns how long to wait before using
// them.
func (k *keyLimiter) reserve(now time.Time, key string, n int) time.Duration {
	k.mu.Lock()
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
	k.mu.Unlock()
	return l.reserve(now, n)
}
