package azurite

import (
	"context"
	"errors"
	"testing"

	"github.com/tablebridge/tablebridge/internal/localproc"
)

// shared is the per-test-binary instance, started on first use. Every start
// failure skips outside CI, not only ErrNotInstalled: a Node.js too old for
// the package is as much a missing tool as no Node.js at all.
var shared = localproc.Shared{
	EnvEndpoint: EnvEndpoint,
	Tests:       "Azurite",
	Server:      "Azurite",
	Start: func() (string, func(), error) {
		inst, err := Start(context.Background())
		if err != nil {
			return "", nil, err
		}
		return inst.Endpoint, inst.Stop, nil
	},
	Hint: hint,
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
func StopShared() { shared.Close() }

// Endpoint returns the account URL of Azurite for tests:
// $TABLEBRIDGE_AZURITE_ENDPOINT when set, otherwise an instance started once
// for this test binary (stopped by Main). When Azurite cannot start (not
// installed, Node.js missing or too old, no port) it skips t with a loud
// message saying why, or fails t when $CI is set: CI never passes by
// skipping. Under go test -short it skips t (localproc.SkipShort).
func Endpoint(t testing.TB) string {
	t.Helper()
	localproc.SkipShort(t, "Azurite")
	return shared.Endpoint(t)
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
