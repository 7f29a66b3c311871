package lambdafn

import (
	"context"
	"testing"
	"time"
)

// TestRequestDeadline: the request's deadline is the earlier of API
// Gateway's 29 s, counted from when the gateway received the request, and
// the invocation's deadline, less the margin for the answer.
func TestRequestDeadline(t *testing.T) {
	now := time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC)
	withDeadline := func(d time.Duration) context.Context {
		ctx, cancel := context.WithDeadline(context.Background(), now.Add(d))
		t.Cleanup(cancel)
		return ctx
	}
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		received time.Time
		want     time.Time
	}{
		{"no invocation deadline, no receipt time", context.Background(), time.Time{}, now.Add(28 * time.Second)},
		{"gateway timeout first", withDeadline(30 * time.Second), now, now.Add(28 * time.Second)},
		{"a cold start spent 6 s of the gateway's time", withDeadline(30 * time.Second), now.Add(-6 * time.Second), now.Add(22 * time.Second)},
		{"invocation deadline first", withDeadline(10 * time.Second), now.Add(-time.Second), now.Add(9 * time.Second)},
		{"receipt after now (clock skew) counts from now", withDeadline(time.Minute), now.Add(2 * time.Second), now.Add(28 * time.Second)},
		{"a stored event's old receipt time is ignored", withDeadline(time.Minute), now.Add(-time.Hour), now.Add(28 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := requestDeadline(tc.ctx, now, tc.received); !got.Equal(tc.want) {
				t.Errorf("deadline %v, want %v", got.Sub(now), tc.want.Sub(now))
			}
		})
	}
}
