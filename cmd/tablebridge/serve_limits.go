package main

import (
	"flag"
	"os"
	"runtime/debug"
	"time"

	"github.com/tablebridge/tablebridge/shared/httpapi"
)

// serveLimits are serve's bounds on what clients may hold (SECURITY.md
// lists them all, with where each is enforced).
type serveLimits struct {
	bodyTimeout  time.Duration
	writeTimeout time.Duration
	maxRequests  int
	maxBodyBytes int64
	// maxAnswerBytes bounds the answers being written (see
	// httpapi.Limits.MaxAnswerBytes).
	maxAnswerBytes int64
	// answerBudget bounds one query answer's body: a page ends early, with
	// a continuation, before it grows past it (httpapi.Options.AnswerBudget).
	answerBudget int
	// memoryLimit is the Go runtime's soft memory limit in bytes; 0 leaves
	// the runtime's default (or GOMEMLIMIT).
	memoryLimit int64
}

// Defaults of the serve flags: 32 bodies of the 4 MiB maximum may be in
// flight at once, and the heap stays near 1 GiB whatever GOGC allows.
const (
	defaultMaxRequests  = 512
	defaultMaxBodyBytes = 128 << 20
	// Answers: 64 pages of 4 MiB being written to slow clients at once.
	defaultMaxAnswerBytes = 256 << 20
	defaultMemoryLimit    = 1 << 30
)

func (l *serveLimits) register(fs *flag.FlagSet) {
	fs.DurationVar(&l.bodyTimeout, "body-timeout", 30*time.Second, "longest a client may take to send a request body (500 OperationTimedOut after)")
	fs.DurationVar(&l.writeTimeout, "write-timeout", 30*time.Second, "longest a client may take to read an answer (the connection is closed after)")
	fs.IntVar(&l.maxRequests, "max-requests", defaultMaxRequests, "requests in flight at most; more are answered 503 ServerBusy (0: no bound)")
	fs.Int64Var(&l.maxBodyBytes, "max-body-bytes", defaultMaxBodyBytes, "request body bytes in flight at most; more are answered 503 ServerBusy (0: no bound)")
	fs.Int64Var(&l.maxAnswerBytes, "max-answer-bytes", defaultMaxAnswerBytes, "answer bytes being written at most; an answer past it is replaced by 503 ServerBusy (0: no bound)")
	fs.IntVar(&l.answerBudget, "answer-bytes", httpapi.DefaultAnswerBudget, "largest query answer body; a page ends early with a continuation before it grows past it")
	fs.Int64Var(&l.memoryLimit, "memory-limit", defaultMemoryLimit, "soft limit of the Go heap in bytes, unless GOMEMLIMIT is set (0: none)")
}

func (l serveLimits) handlerLimits() httpapi.Limits {
	return httpapi.Limits{
		BodyTimeout:    l.bodyTimeout,
		WriteTimeout:   l.writeTimeout,
		MaxRequests:    l.maxRequests,
		MaxBodyBytes:   l.maxBodyBytes,
		MaxAnswerBytes: l.maxAnswerBytes,
		ReturnMemory:   true,
	}
}

// applyMemoryLimit sets the runtime's soft memory limit. tuneGC lets the
// heap grow to five times what is live; under a burst of large requests
// that multiplies what the burst held, and the limit keeps the collector
// working before the process outgrows it.
func (l serveLimits) applyMemoryLimit() {
	if l.memoryLimit > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(l.memoryLimit)
	}
}
