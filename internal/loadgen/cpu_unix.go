//go:build unix

package loadgen

import (
	"syscall"
	"time"
)

// processCPU returns the user plus system CPU time this process has used, so
// a report can say how much of the shared machine the client itself took.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
