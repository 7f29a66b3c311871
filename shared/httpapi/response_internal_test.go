package httpapi

import (
	"testing"
	"time"
)

// TestDateCache: the Date header formatted once per second is the one
// formatting each time would give, across second boundaries, going back in
// time, and for a time given in another zone.
func TestDateCache(t *testing.T) {
	t.Parallel()
	var d dateCache
	base := time.Date(2026, 11, 26, 11, 59, 59, 0, time.UTC)
	for _, step := range []time.Duration{0, 1, 999_999_999, 1, 500 * time.Millisecond, -time.Second, 0, -time.Nanosecond, 24 * time.Hour} {
		base = base.Add(step)
		for _, tm := range []time.Time{base, base.In(time.FixedZone("UTC+5", 5*3600))} {
			if got, want := d.format(tm), tm.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"); got != want {
				t.Fatalf("format(%v) = %q, want %q", tm, got, want)
			}
		}
	}
}
