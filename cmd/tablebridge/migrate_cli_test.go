package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// downEndpoint is the connection string of a loopback port nothing listens
// on.
func downEndpoint(t *testing.T) (connStr, url string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return connectionString("http", addr, auth.DevStoreAccount()), "http://" + addr + "/devstoreaccount1"
}

// TestBulkCommandsOnADownEndpoint: a server that is down is reported in
// one line within seconds, not after minutes of retries.
func TestBulkCommandsOnADownEndpoint(t *testing.T) {
	t.Parallel()
	live := protocoltest.New(t)
	down, downURL := downEndpoint(t)
	want := "cannot reach " + downURL + ": connection refused"
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"migrate", "-from", down, "-to", live.ConnectionString(), "-checkpoint", ""}, 1},
		{[]string{"migrate", "-from", live.ConnectionString(), "-to", down, "-checkpoint", ""}, 1},
		{[]string{"export", "-from", down, "-out", t.TempDir()}, 1},
		{[]string{"verify", "-from", down, "-to", live.ConnectionString()}, 2},
		{[]string{"verify", "-from", live.ConnectionString(), "-to", down}, 2},
	} {
		started := time.Now()
		r := runCLI(t, t.TempDir(), append(tc.args, "-progress", "none")...)
		took := time.Since(started)
		if r.code != tc.code || !strings.Contains(r.stderr, want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: exit %d, stderr %q; want status %d and one line with %q", tc.args[0], r.code, r.stderr, tc.code, want)
		}
		if took > 10*time.Second {
			t.Errorf("%s took %v to give up", tc.args[0], took)
		}
	}
}

// TestMigrateCheckpointInStateDir: without -checkpoint, the checkpoint is a
// file per source and destination in the state directory, named at the
// start; a second run says the migration is complete and how to redo it.
func TestMigrateCheckpointInStateDir(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	src, dst := protocoltest.New(t), protocoltest.New(t)
	seedTable(t, src.Store, "Orders", 300, 3)
	args := []string{"-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-progress", "none"}
	code, out, errOut := runCmd(t, migrateFn, args...)
	cpRe := regexp.MustCompile(`(?m)^checkpoint: (.+)$`)
	m := cpRe.FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "Orders: 300 entities copied") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	cp := m[1]
	if filepath.Dir(cp) != filepath.Join(state, "tablebridge") || !strings.HasPrefix(filepath.Base(cp), "migrate-") {
		t.Fatalf("checkpoint %s, want one under %s", cp, filepath.Join(state, "tablebridge"))
	}
	if _, err := os.Stat(cp); err != nil {
		t.Fatal(err)
	}
	if found, _ := filepath.Glob("*checkpoint*"); len(found) != 0 {
		t.Fatalf("checkpoint files in the working directory: %v", found)
	}

	code, out, errOut = runCmd(t, migrateFn, args...)
	want := "migrate: already complete (checkpoint " + cp + "); -restart to copy again"
	if code != 0 || !strings.Contains(out, want) {
		t.Fatalf("second run: exit %d, output lacks %q:\n%s\n%s", code, want, out, errOut)
	}
	code, out, errOut = runCmd(t, migrateFn, append(args, "-restart")...)
	if code != 0 || !strings.Contains(out, "Orders: 300 entities copied") || strings.Contains(out, "already complete") {
		t.Fatalf("-restart: exit %d\n%s\n%s", code, out, errOut)
	}

	// Another destination has a checkpoint of its own.
	other := protocoltest.New(t)
	code, out, _ = runCmd(t, migrateFn, "-from", src.ConnectionString(), "-to", other.ConnectionString(), "-progress", "none")
	if m2 := cpRe.FindStringSubmatch(out); code != 0 || m2 == nil || m2[1] == cp {
		t.Fatalf("another destination: exit %d, checkpoint %v (the first was %s)\n%s", code, m2, cp, out)
	}
}

// TestReadersNeedData: export and verify read a data directory; one that
// holds nothing is an error, and is not created.
func TestReadersNeedData(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "typo")
	live := protocoltest.New(t)
	for _, args := range [][]string{
		{"export", "-store", "bolt", "-data", missing, "-out", t.TempDir()},
		{"verify", "-from", live.ConnectionString(), "-store", "bolt", "-data", missing},
	} {
		r := runCLI(t, t.TempDir(), append(args, "-progress", "none")...)
		if r.code == 0 || !strings.Contains(r.stderr, "data directory "+missing+" holds no tablebridge data") {
			t.Errorf("%s: exit %d, stderr %q", args[0], r.code, r.stderr)
		}
		if _, err := os.Stat(missing); !os.IsNotExist(err) {
			t.Fatalf("%s created %s: %v", args[0], missing, err)
		}
	}
}

// TestServeOnADownDynamoDB: serve -store dynamodb with an endpoint nothing
// listens on fails at once, not when its -dynamodb-timeout (here 10
// minutes) runs out: the bound is far from both, so a busy machine does
// not fail the test.
func TestServeOnADownDynamoDB(t *testing.T) {
	t.Parallel()
	_, downURL := downEndpoint(t)
	endpoint := strings.TrimSuffix(downURL, "/devstoreaccount1")
	started := time.Now()
	r := runCLI(t, t.TempDir(), "serve", "-listen", "127.0.0.1:0", "-store", "dynamodb", "-dynamodb-endpoint", endpoint, "-dynamodb-timeout", "10m")
	if r.code != 1 || !strings.Contains(r.stderr, "-dynamodb-endpoint: cannot reach "+endpoint+": connection refused") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if took := time.Since(started); took > 2*time.Minute {
		t.Errorf("took %v: it waited for its timeout", took)
	}
}
