package oauth

import (
	"sync/atomic"
	"time"
)

// MoveKeyClock makes v's key sets see a clock the test moves on with the
// returned function, so a refresh interval passes without waiting. Call it
// before v is first used.
func MoveKeyClock(v *Verified) (advance func(time.Duration)) {
	var offset atomic.Int64
	v.now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	return func(d time.Duration) { offset.Add(int64(d)) }
}
