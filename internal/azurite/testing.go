package azurite

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
)

// shared is the per-test-binary instance, started on first use.
var shared struct {
	once     sync.Once
	endpoint string
	inst     *Instance
	err      error
}

// Main runs the tests and stops the instance that Endpoint may have started.
// Use it from TestMain: os.Exit(azurite.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	StopShared()
	return code
}

// StopShared stops the instance Endpoint started for this test binary, if
// any. Main calls it; a TestMain that already runs another harness's Main
// (dynamolocal.Main) calls it after that returns.
func StopShared() {
	if shared.inst != nil {
		shared.inst.Stop()
	}
}

// Endpoint returns the account URL of Azurite for tests:
// $TABLEBRIDGE_AZURITE_ENDPOINT when set, otherwise an instance started once
// for this test binary (stopped by Main). When Azurite cannot start (not
// installed, Node.js missing or too old, no port) it skips t with a loud
// message saying why, or fails t when $CI is set: CI never passes by
// skipping.
func Endpoint(t testing.TB) string {
	t.Helper()
	shared.once.Do(func() {
		if ep := os.Getenv(EnvEndpoint); ep != "" {
			shared.endpoint = ep
			return
		}
		shared.inst, shared.err = Start(context.Background())
		if shared.inst != nil {
			shared.endpoint = shared.inst.Endpoint
		}
	})
	if shared.err != nil {
		if os.Getenv(EnvCI) == "" {
			t.Skipf("\n*** SKIPPING Azurite tests: %v\n*** %s\n*** (with CI set, this is a failure)", shared.err, hint(shared.err))
		}
		t.Fatalf("Azurite unavailable: %v\n%s", shared.err, hint(shared.err))
	}
	return shared.endpoint
}

func hint(err error) string {
	if errors.Is(err, ErrNotInstalled) {
		return installHint
	}
	return "Azurite is installed but did not start; its output is above"
}

// ConnectionString returns the development account's connection string for
// Endpoint(t); it skips or fails t the same way.
func ConnectionString(t testing.TB) string {
	t.Helper()
	return connectionString(Endpoint(t))
}
