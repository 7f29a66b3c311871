package timedstore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tablebridge/tablebridge/shared/store"
)

// TestOutcome: a backend's throttle and unavailability are told apart from
// the protocol's ordinary errors, wrapped as stores wrap them.
func TestOutcome(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want Outcome
	}{
		{nil, OK},
		{fmt.Errorf("dynamostore: put: %w", store.ErrBusy), Busy},
		{fmt.Errorf("dynamostore: query: %w", store.ErrUnavailable), Unavailable},
		{&store.OpError{Index: 2, Err: store.ErrEntityExists}, Failed},
		{errors.New("disk full"), Failed},
	} {
		if got := outcome(tc.err); got != tc.want {
			t.Errorf("outcome(%v) = %s, want %s", tc.err, got, tc.want)
		}
	}
}
