package migrate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/tablebridge/tablebridge/shared/store"
)

func responseErr(t *testing.T, status int, code, body string) error {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/x", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader([]byte(body))), Request: req}
	if code != "" {
		resp.Header.Set("x-ms-error-code", code)
	}
	return runtime.NewResponseError(resp)
}

// batchFailure is a 202 transaction response whose operation failed.
const batchFailure = "--batchresponse_1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_1\r\n\r\n--changesetresponse_1\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 %d %s\r\nContent-Type: application/json\r\n\r\n{\"odata.error\":{\"code\":\"%s\",\"message\":{\"lang\":\"en-US\",\"value\":\"0:x\"}}}\r\n--changesetresponse_1--\r\n--batchresponse_1--\r\n"

func TestRetryable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"canceled", context.Canceled, false},
		{"wrapped canceled", fmt.Errorf("x: %w", context.Canceled), false},
		{"store busy", fmt.Errorf("op 0: %w", store.ErrBusy), true},
		{"store unavailable", store.ErrUnavailable, true},
		{"entity too large", store.ErrEntityTooLarge, false},
		{"503 ServerBusy", responseErr(t, 503, "ServerBusy", ""), true},
		{"429 TooManyRequests", responseErr(t, 429, "TooManyRequests", ""), true},
		{"500 OperationTimedOut", responseErr(t, 500, "OperationTimedOut", ""), true},
		{"502", responseErr(t, 502, "", ""), true},
		{"504", responseErr(t, 504, "", ""), true},
		{"408", responseErr(t, 408, "", ""), true},
		{"400 InvalidInput", responseErr(t, 400, "InvalidInput", ""), false},
		{"403", responseErr(t, 403, "AuthenticationFailed", ""), false},
		{"404 TableNotFound", responseErr(t, 404, "TableNotFound", ""), false},
		{"202 with an inner 503", responseErr(t, 202, "", fmt.Sprintf(batchFailure, 503, "Server Busy", "ServerBusy")), true},
		{"202 with an inner 400", responseErr(t, 202, "", fmt.Sprintf(batchFailure, 400, "Bad Request", "InvalidInput")), false},
		{"wrapped response error", fmt.Errorf("transaction: %w", &responseError{re: responseErr(t, 503, "ServerBusy", "").(*azcore.ResponseError)}), true},
		{"per-try timeout", context.DeadlineExceeded, true},
		{"connection reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"unexpected EOF", io.ErrUnexpectedEOF, true},
		{"refused", syscall.ECONNREFUSED, true},
		{"plain error", errors.New("bad"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Retryable(tt.err); got != tt.want {
				t.Fatalf("Retryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestInnerFailure(t *testing.T) {
	t.Parallel()
	err := responseErr(t, 202, "", fmt.Sprintf(batchFailure, 409, "Conflict", "EntityAlreadyExists"))
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatal("not a ResponseError")
	}
	if got := innerFailure(re); got != "409 EntityAlreadyExists" {
		t.Fatalf("innerFailure = %q", got)
	}
	if got := shortResponseError(re); got != "202 Accepted: 409 EntityAlreadyExists" {
		t.Fatalf("shortResponseError = %q", got)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fast := Backoff{Attempts: 4, Base: time.Microsecond, Max: time.Millisecond}
	t.Run("retries transient errors then succeeds", func(t *testing.T) {
		calls := 0
		err := fast.do(ctx, func() error {
			calls++
			if calls < 3 {
				return store.ErrBusy
			}
			return nil
		})
		if err != nil || calls != 3 {
			t.Fatalf("err = %v after %d calls", err, calls)
		}
	})
	t.Run("gives up after Attempts", func(t *testing.T) {
		calls := 0
		err := fast.do(ctx, func() error { calls++; return store.ErrBusy })
		if !errors.Is(err, store.ErrBusy) || calls != 4 {
			t.Fatalf("err = %v after %d calls, want ErrBusy after 4", err, calls)
		}
	})
	t.Run("does not retry permanent errors", func(t *testing.T) {
		calls := 0
		err := fast.do(ctx, func() error { calls++; return store.ErrEntityTooLarge })
		if !errors.Is(err, store.ErrEntityTooLarge) || calls != 1 {
			t.Fatalf("err = %v after %d calls", err, calls)
		}
	})
	t.Run("stops when the context ends", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		slow := Backoff{Attempts: 10, Base: time.Hour, Max: time.Hour}
		calls := 0
		err := slow.do(ctx, func() error { calls++; cancel(); return store.ErrBusy })
		if !errors.Is(err, context.Canceled) || !errors.Is(err, store.ErrBusy) || calls != 1 {
			t.Fatalf("err = %v after %d calls", err, calls)
		}
	})
	t.Run("delays grow, are capped and jittered", func(t *testing.T) {
		b := Backoff{Base: 100 * time.Millisecond, Max: time.Second}.withDefaults()
		for n := range 40 {
			limit := min(b.Max, b.Base<<min(n, 30))
			for range 20 {
				if d := b.delay(n); d < 0 || d > limit {
					t.Fatalf("delay(%d) = %v, want within [0, %v]", n, d, limit)
				}
			}
		}
		distinct := map[time.Duration]bool{}
		for range 50 {
			distinct[b.delay(5)] = true
		}
		if len(distinct) < 10 {
			t.Fatalf("delay(5) took only %d values in 50 draws: no jitter", len(distinct))
		}
	})
	t.Run("defaults", func(t *testing.T) {
		b := Backoff{}.withDefaults()
		if b.Attempts != 8 || b.Base != 200*time.Millisecond || b.Max != 30*time.Second {
			t.Fatalf("defaults = %+v", b)
		}
	})
}

// flakySource fails ReadPage with store.ErrBusy until its failures run out.
type flakySource struct {
	listSource
	failures, calls int
}

func (s *flakySource) ReadPage(_ context.Context, table string, req PageRequest) (Page, error) {
	s.calls++
	if s.calls <= s.failures {
		return Page{}, store.ErrBusy
	}
	return Page{Next: &Continuation{NextPartitionKey: table, Offset: int64(req.Top)}}, nil
}

func TestBackoffReadPage(t *testing.T) {
	t.Parallel()
	fast := Backoff{Attempts: 4, Base: time.Microsecond, Max: time.Millisecond}
	src := &flakySource{failures: 2}
	page, err := fast.readPage(context.Background(), src, "Orders", PageRequest{Top: 7})
	if err != nil || src.calls != 3 || page.Next == nil || *page.Next != (Continuation{NextPartitionKey: "Orders", Offset: 7}) {
		t.Fatalf("readPage = %+v, %v after %d calls; want the third try's page", page, err, src.calls)
	}
}
