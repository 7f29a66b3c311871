package store

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestDurableWakesEveryWaiter races waiters against the sync that
// releases them, one write at a time with no later sync to come. A waiter
// that read the count before the sync moved it and the wake-up channel
// after must still wake: it is a read, or a refused write, whose answer
// waits for the writes it saw, and with no other write coming it would
// wait out its request's deadline. A waiter gives up after 2 s, so a lost
// wake-up fails rather than hangs.
func TestDurableWakesEveryWaiter(t *testing.T) {
	t.Parallel()
	d := NewDurable(0)
	const rounds, waiters = 20_000, 4
	for n := uint64(1); n <= rounds; n++ {
		var ready, done sync.WaitGroup
		ready.Add(waiters)
		done.Add(waiters)
		lost := 0
		var mu sync.Mutex
		for range waiters {
			go func() {
				defer done.Done()
				ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
				defer cancel()
				ready.Done()
				if err := d.Wait(ctx, n); err != nil {
					mu.Lock()
					lost++
					mu.Unlock()
				}
			}()
		}
		ready.Wait()
		d.Synced(n)
		done.Wait()
		if lost > 0 {
			t.Fatalf("write %d: %d of %d waiters were never woken by the sync that covered them", n, lost, waiters)
		}
	}
}
