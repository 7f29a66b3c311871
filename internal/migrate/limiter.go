package migrate

import (
	"context"
	"sync"
	"time"
)

// limiter is a token bucket of entities per second (-rate). It refills at
// rate tokens a second up to burst. Wait(n) takes n tokens and may drive the
// bucket into debt when n exceeds what is there, even more than burst; the
// caller then sleeps until the debt is paid. So a 1000-entity page under a
// 100/s limit waits 10 s instead of never fitting, and the long-run rate is
// exact whatever the sizes asked for.
type limiter struct {
	rate  float64 // tokens per second; <= 0 means unlimited
	burst float64
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newLimiter(rate float64) *limiter {
	l := &limiter{rate: rate, now: time.Now, sleep: sleepCtx}
	if rate > 0 {
		// A second's worth, at least one batch: short bursts smooth out,
		// and the average holds.
		l.burst = max(rate, MaxBatch)
		l.tokens = l.burst
		l.last = l.now()
	}
	return l
}

// Wait blocks until n entities may pass, or ctx ends.
func (l *limiter) Wait(ctx context.Context, n int) error {
	if l == nil || l.rate <= 0 || n <= 0 {
		return ctx.Err()
	}
	l.mu.Lock()
	now := l.now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens -= float64(n)
	var wait time.Duration
	if l.tokens < 0 {
		wait = time.Duration(-l.tokens / l.rate * float64(time.Second))
	}
	l.mu.Unlock()
	if wait <= 0 {
		return ctx.Err()
	}
	return l.sleep(ctx, wait)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
