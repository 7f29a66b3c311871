package migrate

import (
	"context"
	"errors"
	"testing"
	"time"
)

// fakeTime drives a limiter: sleeping advances the clock.
type fakeTime struct {
	now   time.Time
	slept time.Duration
}

func (f *fakeTime) limiter(rate float64) *limiter {
	l := newLimiter(rate)
	l.now = func() time.Time { return f.now }
	l.sleep = func(ctx context.Context, d time.Duration) error {
		f.slept += d
		f.now = f.now.Add(d)
		return ctx.Err()
	}
	l.last = f.now
	return l
}

func TestLimiter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("unlimited never waits", func(t *testing.T) {
		f := &fakeTime{now: time.Unix(0, 0)}
		l := f.limiter(0)
		for range 100 {
			if err := l.Wait(ctx, 1000); err != nil {
				t.Fatal(err)
			}
		}
		if f.slept != 0 {
			t.Fatalf("slept %v", f.slept)
		}
	})
	t.Run("long-run rate is exact", func(t *testing.T) {
		f := &fakeTime{now: time.Unix(0, 0)}
		l := f.limiter(1000)
		start := f.now
		// The burst (1000) passes at once; 10,000 more take 10 s.
		for range 110 {
			if err := l.Wait(ctx, 100); err != nil {
				t.Fatal(err)
			}
		}
		if got := f.now.Sub(start); got < 9900*time.Millisecond || got > 10100*time.Millisecond {
			t.Fatalf("11,000 entities at 1000/s took %v, want 10 s after the burst", got)
		}
	})
	t.Run("a request above the burst goes into debt", func(t *testing.T) {
		f := &fakeTime{now: time.Unix(0, 0)}
		l := f.limiter(100) // burst 100
		if err := l.Wait(ctx, 1000); err != nil {
			t.Fatal(err)
		}
		if f.slept < 8900*time.Millisecond || f.slept > 9100*time.Millisecond {
			t.Fatalf("slept %v, want 9 s for 900 entities over the burst", f.slept)
		}
	})
	t.Run("idle time refills up to the burst only", func(t *testing.T) {
		f := &fakeTime{now: time.Unix(0, 0)}
		l := f.limiter(100)
		f.now = f.now.Add(time.Hour)
		_ = l.Wait(ctx, 100)
		_ = l.Wait(ctx, 100)
		if f.slept < 900*time.Millisecond || f.slept > 1100*time.Millisecond {
			t.Fatalf("slept %v, want about 1 s: an hour idle must not bank 360,000 tokens", f.slept)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		l := newLimiter(1)
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		if err := l.Wait(ctx, 1000); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("nil limiter", func(t *testing.T) {
		var l *limiter
		if err := l.Wait(ctx, 5); err != nil {
			t.Fatal(err)
		}
	})
}
