package dynamolocal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tablebridge/tablebridge/internal/localproc"
)

// shared is the per-test-binary instance, started on first use. Only a
// missing install skips; any other start failure is a real problem and fails.
var shared = localproc.Shared{
	EnvEndpoint: EnvEndpoint,
	Tests:       "DynamoDB",
	Server:      "DynamoDB Local",
	Start: func() (string, func(), error) {
		inst, err := Start(context.Background())
		if err != nil {
			return "", nil, err
		}
		return inst.Endpoint, inst.Stop, nil
	},
	Skippable: func(err error) bool { return errors.Is(err, ErrNotInstalled) },
	Hint:      func(error) string { return installHint },
}

// Main runs the tests and stops the instance that Endpoint may have started.
// Use it from TestMain: os.Exit(dynamolocal.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	shared.Close()
	if err := shared.Err(); errors.Is(err, ErrNotInstalled) && os.Getenv(EnvCI) == "" {
		// t.Skip messages only show with -v; say it once regardless.
		fmt.Fprintf(os.Stderr, "\n*** DynamoDB tests were SKIPPED: %v\n*** %s\n\n", err, installHint)
	}
	return code
}

// Endpoint returns the DynamoDB endpoint for tests: $TABLEBRIDGE_DYNAMODB_ENDPOINT
// when set, otherwise an instance started once for this test binary (stopped
// by Main). When DynamoDB Local is not installed it skips t with a loud
// message, or fails t when $CI is set. Any other start failure fails t.
// Under go test -short it skips t (localproc.SkipShort).
func Endpoint(t testing.TB) string {
	t.Helper()
	localproc.SkipShort(t, "DynamoDB Local")
	return shared.Endpoint(t)
}

// Client returns a client for Endpoint(t); it skips or fails t the same way.
func Client(t testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	t.Helper()
	return NewClient(Endpoint(t), optFns...)
}

// Context returns a context that ends with the test or after timeout,
// whichever comes first, so a stuck call fails the test instead of hanging
// it until the go test deadline.
func Context(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return ctx
}

// UniqueName returns a name unique to this process and call, made of
// characters legal in DynamoDB table names, for per-test table prefixes on a
// shared instance.
func UniqueName(prefix string) string {
	n := uniqueCounter.Add(1)
	return fmt.Sprintf("%s%d-%d-%d", prefix, os.Getpid(), time.Now().UnixNano()%1e9, n)
}

var uniqueCounter atomic.Int64

// Private starts a DynamoDB Local of t's own, stopped when t ends, for tests
// that freeze, kill or empty it: never do that to the shared one. It skips
// or fails t as Endpoint does when DynamoDB Local is not installed, and
// skips it under go test -short.
func Private(t testing.TB) *Instance {
	t.Helper()
	localproc.SkipShort(t, "DynamoDB Local")
	inst, err := Start(context.Background())
	if errors.Is(err, ErrNotInstalled) && os.Getenv(EnvCI) == "" {
		t.Skipf("DynamoDB Local is not installed: %v (%s)", err, installHint)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(inst.Stop)
	return inst
}
