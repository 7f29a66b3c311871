package lambdafn

import (
	"runtime/debug"
	"strconv"
)

// envMemorySize is set by Lambda to the function's MemorySize in MB.
const envMemorySize = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"

// memoryLimit is the Go runtime's soft memory limit for a function of the
// MemorySize getenv reports: seven eighths of it, leaving the rest to what
// the runtime does not count (the binary, goroutine stacks' OS share). Lambda
// ends an execution environment whose memory passes MemorySize; with the
// limit the collector works harder as the heap nears it instead of letting
// GOGC's headroom carry the process past it. 0 when GOMEMLIMIT is set (the
// runtime already applies it) or MemorySize is unknown.
func memoryLimit(getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	mb, err := strconv.ParseInt(getenv(envMemorySize), 10, 64)
	if err != nil || mb <= 0 {
		return 0
	}
	return mb << 20 / 8 * 7
}

func applyMemoryLimit(getenv func(string) string) {
	if limit := memoryLimit(getenv); limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}
