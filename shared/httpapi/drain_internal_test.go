package httpapi

import (
	"testing"
	"time"
)

// TestDrainDeadline: a drain never outlives maxDrainTime, even without a
// body timeout, nor the body timeout.
func TestDrainDeadline(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name               string
		bodyDeadline, want time.Time
	}{
		{"no body timeout", time.Time{}, now.Add(maxDrainTime)},
		{"body timeout later", now.Add(time.Minute), now.Add(maxDrainTime)},
		{"body timeout sooner", now.Add(time.Second), now.Add(time.Second)},
		{"body timeout passed", now.Add(-time.Second), now.Add(-time.Second)},
	} {
		if got := drainDeadline(now, tc.bodyDeadline); !got.Equal(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
