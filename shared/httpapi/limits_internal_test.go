package httpapi

import (
	"testing"
	"time"
)

// Memory goes back to the OS when a burst of at least burstBytes of bodies
// is over, at most once per burstCooldown, and never for small traffic.
func TestAdmissionReturnsMemoryAfterBursts(t *testing.T) {
	t.Parallel()
	l := &Limits{ReturnMemory: true}
	var a admission
	take := func(n int64) { a.requests++; a.bytes += n; a.peak = max(a.peak, a.bytes) }

	take(4 << 20)
	if a.released(4<<20, l) {
		t.Fatal("a small request counted as a burst")
	}
	for range 10 {
		take(4 << 20)
	}
	for i := range 10 {
		if got := a.released(4<<20, l); got != (i == 9) {
			t.Fatalf("release %d: burst over = %t", i, got)
		}
	}
	for range 10 {
		take(4 << 20)
	}
	for range 10 {
		if a.released(4<<20, l) {
			t.Fatal("memory returned again within the cooldown")
		}
	}
	a.lastReturn = time.Now().Add(-burstCooldown)
	take(40 << 20)
	if !a.released(40<<20, l) {
		t.Fatal("no return after the cooldown")
	}
	if a.requests != 0 || a.bytes != 0 {
		t.Fatalf("counters left at %d requests, %d bytes", a.requests, a.bytes)
	}
}
