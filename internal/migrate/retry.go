package migrate

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/tablebridge/tablebridge/shared/store"
)

// Backoff retries what the SDK does not: a transaction whose inner
// operation was throttled (Azure answers 202 with a 503 ServerBusy part,
// which azcore's retry policy cannot see), a store that said ErrBusy, and
// whatever still fails after the SDK's own retries. Delays grow
// exponentially from Base to Max with full jitter ("Exponential Backoff And
// Jitter", AWS Architecture Blog), so parallel writers that were throttled
// together do not come back together.
type Backoff struct {
	// Attempts is the most tries in all (default 8).
	Attempts int
	// Base is the first delay's upper bound (default 200 ms); Max caps the
	// delays (default 30 s).
	Base, Max time.Duration
}

func (b Backoff) withDefaults() Backoff {
	if b.Attempts <= 0 {
		b.Attempts = 8
	}
	if b.Base <= 0 {
		b.Base = 200 * time.Millisecond
	}
	if b.Max <= 0 {
		b.Max = 30 * time.Second
	}
	return b
}

// delay is the wait before retry number n (0-based): uniform in
// [0, min(Max, Base*2^n)].
func (b Backoff) delay(n int) time.Duration {
	d := b.Max
	if n < 32 {
		if exp := b.Base << n; exp > 0 && exp < b.Max {
			d = exp
		}
	}
	return time.Duration(rand.Int64N(int64(d) + 1))
}

// do runs fn until it succeeds, fails with an error Retryable rejects, runs
// out of attempts or ctx ends.
func (b Backoff) do(ctx context.Context, fn func() error) error {
	b = b.withDefaults()
	var err error
	for n := 0; n < b.Attempts; n++ {
		if err = fn(); err == nil || !Retryable(err) || n == b.Attempts-1 {
			return err
		}
		t := time.NewTimer(b.delay(n))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
	}
	return err
}

// readPage reads one page of table from src, retrying transient failures.
func (b Backoff) readPage(ctx context.Context, src Source, table string, req PageRequest) (Page, error) {
	var page Page
	err := b.do(ctx, func() error {
		var err error
		page, err = src.ReadPage(ctx, table, req)
		return err
	})
	return page, err
}

// Retryable reports whether err is transient: throttling (503 ServerBusy,
// 429 TooManyRequests from Cosmos DB), a timeout or internal error on the
// service side (408, 500 OperationTimedOut or InternalError, 502, 504), a
// transaction that failed for one of those reasons, a busy or unreachable
// store, or a broken connection. A cancelled context is not.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, store.ErrBusy) || errors.Is(err, store.ErrUnavailable) {
		return true
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if re.StatusCode == http.StatusAccepted {
			return retryableStatus(innerStatus(re))
		}
		return retryableStatus(re.StatusCode)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// A per-try timeout of the SDK, not ours: ours ends the run
		// through ctx, which do checks between attempts.
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE)
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// innerStatusLine finds the failing operation's status line in a
// transaction response ("HTTP/1.1 503 Server Busy" inside the changeset).
var innerStatusLine = regexp.MustCompile(`HTTP/1\.[01] (\d{3})`)

// innerCode finds its error code in the odata.error body.
var innerCode = regexp.MustCompile(`"code"\s*:\s*"([A-Za-z]+)"`)

func innerStatus(re *azcore.ResponseError) int {
	body := responseBody(re)
	for _, m := range innerStatusLine.FindAllSubmatch(body, -1) {
		code := int(m[1][0]-'0')*100 + int(m[1][1]-'0')*10 + int(m[1][2]-'0')
		if code >= 400 {
			return code
		}
	}
	return 0
}

// innerFailure describes a failed transaction: the failing operation's
// status and code, e.g. "503 ServerBusy".
func innerFailure(re *azcore.ResponseError) string {
	status := innerStatus(re)
	if status == 0 {
		return ""
	}
	s := http.StatusText(status)
	if m := innerCode.FindSubmatch(responseBody(re)); m != nil {
		s = string(m[1])
	}
	return strconv.Itoa(status) + " " + s
}

func responseBody(re *azcore.ResponseError) []byte {
	if re.RawResponse == nil {
		return nil
	}
	body, err := runtime.Payload(re.RawResponse)
	if err != nil {
		return nil
	}
	return body
}
