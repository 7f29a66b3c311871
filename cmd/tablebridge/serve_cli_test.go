package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// TestServePortInUse: a port in use fails at once, in one line, before the
// data directory is created.
func TestServePortInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	data := filepath.Join(t.TempDir(), "data")
	r := runCLI(t, t.TempDir(), "serve", "-listen", ln.Addr().String(), "-data", data)
	want := ln.Addr().String() + " is already in use"
	if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q; want status 1 and one line with %q", r.code, r.stderr, want)
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("the data directory was created: %v", err)
	}
}

var listeningRe = regexp.MustCompile(`tablebridge listening on http://(\S+) `)

// waitListening waits for serve's first line and returns the address.
func waitListening(t *testing.T, out *syncBuffer) string {
	t.Helper()
	var addr string
	if !waitFor(30*time.Second, func() bool {
		m := listeningRe.FindStringSubmatch(out.String())
		if m != nil {
			addr = m[1]
		}
		return m != nil
	}) {
		t.Fatalf("serve did not start:\n%s", out.String())
	}
	return addr
}

// TestServeDataDirInUse: a second serve on a data directory in use says
// which process has it, at once; the first stops cleanly on SIGINT with
// status 0 and releases it.
func TestServeDataDirInUse(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	first, out := startCLI(t, "serve", "-listen", "127.0.0.1:0", "-data", data)
	addr := waitListening(t, out)

	started := time.Now()
	r := runCLI(t, t.TempDir(), "serve", "-listen", "127.0.0.1:0", "-data", data)
	want := "data directory " + data + " is in use by another tablebridge (pid " + strconv.Itoa(first.Process.Pid) + ", serve)"
	if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("second serve: exit %d, stderr %q; want one line with %q", r.code, r.stderr, want)
	}
	if took := time.Since(started); took > 10*time.Second {
		t.Errorf("the second serve took %v to give up", took)
	}
	// migrate into the same directory is refused the same way.
	cs := connectionString("http", addr, auth.DevStoreAccount())
	r = runCLI(t, t.TempDir(), "migrate", "-from", cs, "-store", "bolt", "-data", data, "-checkpoint", "", "-progress", "none")
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Fatalf("migrate -store bolt: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}

	// The first is unharmed.
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), "stillserving", nil); err != nil {
		t.Fatal(err)
	}

	if err := first.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := first.Wait(); err != nil {
		t.Fatalf("serve after SIGINT: %v (want status 0)\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "tablebridge shutting down") {
		t.Errorf("output:\n%s", out.String())
	}
	if _, err := os.Stat(filepath.Join(data, pidFileName)); !os.IsNotExist(err) {
		t.Errorf("pid file left behind: %v", err)
	}
}

// TestListenAddrs: a wildcard listen address is shown as given, and the
// connection string names loopback, where a local app connects.
func TestListenAddrs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		given         string
		bound         net.Addr
		shown, connto string
	}{
		{"0.0.0.0:10002", &net.TCPAddr{IP: net.IPv6unspecified, Port: 10002}, "0.0.0.0:10002", "127.0.0.1:10002"},
		{":10002", &net.TCPAddr{IP: net.IPv6unspecified, Port: 10002}, "0.0.0.0:10002", "127.0.0.1:10002"},
		{"[::]:10002", &net.TCPAddr{IP: net.IPv6unspecified, Port: 10002}, "[::]:10002", "127.0.0.1:10002"},
		{"127.0.0.1:0", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}, "127.0.0.1:41234", "127.0.0.1:41234"},
		{"localhost:10002", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 10002}, "localhost:10002", "localhost:10002"},
		{"[::1]:10002", &net.TCPAddr{IP: net.IPv6loopback, Port: 10002}, "[::1]:10002", "[::1]:10002"},
	} {
		shown, connect := listenAddrs(tc.given, tc.bound)
		if shown != tc.shown || connect != tc.connto {
			t.Errorf("listenAddrs(%q, %v) = %q, %q; want %q, %q", tc.given, tc.bound, shown, connect, tc.shown, tc.connto)
		}
	}
}
