package localproc

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tests run this test binary again as the child server: with
// envHelperMode set, TestMain runs helperMain instead of the tests.
const (
	envHelperMode = "LOCALPROC_TEST_HELPER"
	// envHelperCounter names a file the "flaky" mode counts its runs in.
	envHelperCounter = "LOCALPROC_TEST_COUNTER"
)

// Helper modes.
const (
	modeServe  = "serve"  // answer every request with 403, like an emulator refusing an unsigned one
	modeExit   = "exit"   // complain and exit 3 at once, like a server whose port was taken
	modeSilent = "silent" // run without ever listening
	modeFlaky  = "flaky"  // exit like modeExit on the first two runs, then serve
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelperMode); mode != "" {
		os.Exit(helperMain(mode, os.Args[len(os.Args)-1]))
	}
	os.Exit(m.Run())
}

func helperMain(mode, portArg string) int {
	port, err := strconv.Atoi(portArg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "helper: bad port %q\n", portArg)
		return 2
	}
	if mode == modeFlaky {
		mode = modeServe
		if flakyRun() <= 2 {
			mode = modeExit
		}
	}
	switch mode {
	case modeServe:
		wd, _ := os.Getwd()
		fmt.Printf("helper serving on %d in %s\n", port, wd)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", portArg))
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 1
		}
		err = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "unsigned request at "+r.URL.Path, http.StatusForbidden)
		}))
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	case modeExit:
		fmt.Fprintf(os.Stderr, "helper: port %d is already in use\n", port)
		return 3
	case modeSilent:
		time.Sleep(time.Hour)
		return 0
	}
	fmt.Fprintf(os.Stderr, "helper: unknown mode %q\n", mode)
	return 2
}

// flakyRun appends a line to the counter file and returns how many runs
// have written to it, this one included.
func flakyRun() int {
	path := os.Getenv(envHelperCounter)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err == nil {
		f.WriteString("run\n")
		f.Close()
	}
	b, _ := os.ReadFile(path)
	return strings.Count(string(b), "\n")
}

// helperSpec runs this test binary as a child in mode, which its
// environment's envHelperMode selects (in the Spec, not by t.Setenv, so
// that the tests can run in parallel).
func helperSpec(t *testing.T, mode string) Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Spec{
		Env:            append(os.Environ(), envHelperMode+"="+mode),
		Name:           "Helper",
		ErrPrefix:      "helpertest",
		Program:        exe,
		Args:           func(port int) []string { return []string{strconv.Itoa(port)} },
		WorkDirPattern: "localproc-test-",
		ProbePath:      "/probe",
		StartTimeout:   30 * time.Second,
	}
}
