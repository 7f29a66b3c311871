package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

const devAccount = "devstoreaccount1"

// seedTable fills a table of a test server with n entities over the given
// number of partitions, concurrently so bbolt's group commit shares syncs.
func seedTable(t *testing.T, st store.Store, table string, n, partitions int) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.CreateTable(ctx, devAccount, table); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	byPK := map[string][]store.Op{}
	for i := range n {
		pk := fmt.Sprintf("p%03d", i%partitions)
		byPK[pk] = append(byPK[pk], store.Op{Kind: store.OpInsert, Entity: &model.Entity{
			PartitionKey: pk, RowKey: fmt.Sprintf("r%06d", i), Timestamp: ts,
			Properties: map[string]edm.Value{"N": edm.NewInt64(int64(i)), "D": edm.NewDouble(float64(i)), "S": edm.NewString(strings.Repeat("s", 50))},
		}})
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(byPK)*(n/100+1))
	sem := make(chan struct{}, 16)
	for _, ops := range byPK {
		for len(ops) > 0 {
			batch := ops[:min(100, len(ops))]
			ops = ops[len(batch):]
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				if err := st.Write(ctx, devAccount, table, batch); err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// countEntities counts a table's entities in a store.
func countEntities(t *testing.T, st store.Store, table string) int {
	t.Helper()
	n := 0
	q := store.Query{Top: 1000}
	for {
		page, err := st.QueryEntities(context.Background(), devAccount, table, q)
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Entities)
		if page.Next == nil {
			return n
		}
		q.After = page.Next
	}
}

// runCmd runs a subcommand in-process and returns its exit status, as main
// would compute it, and its output.
func runCmd(t *testing.T, fn func(context.Context, []string, *bytes.Buffer, *bytes.Buffer) error, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := fn(context.Background(), args, &stdout, &stderr)
	code := 0
	if err != nil {
		code = exitCode(err)
		reportError(&stderr, err)
	}
	return code, stdout.String(), stderr.String()
}

func migrateFn(ctx context.Context, args []string, out, errw *bytes.Buffer) error {
	return migrateCmd(ctx, args, out, errw)
}

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	src, dst := protocoltest.New(t), protocoltest.New(t)
	seedTable(t, src.Store, "Orders", 1200, 12)
	seedTable(t, src.Store, "Users", 40, 40)
	dir := t.TempDir()
	cp := filepath.Join(dir, "cp.json")
	code, out, errOut := runCmd(t, migrateFn, "-from", src.ConnectionString(), "-to", dst.ConnectionString(),
		"-checkpoint", cp, "-rename", "users:People", "-progress", "log")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"checkpoint: " + cp, "copying Orders: 1200 entities", "Users -> People: 40 entities copied", "2 tables, 1240 entities copied"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := countEntities(t, dst.Store, "People"); n != 40 {
		t.Errorf("People holds %d entities", n)
	}
	t.Run("again: already done", func(t *testing.T) {
		code, out, _ := runCmd(t, migrateFn, "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-checkpoint", cp, "-rename", "users:People", "-progress", "none")
		if code != 0 || !strings.Contains(out, "Orders: already done (1200 entities)") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
	})
	t.Run("into a bolt data directory", func(t *testing.T) {
		data := t.TempDir()
		code, out, errOut := runCmd(t, migrateFn, "-from", src.ConnectionString(), "-store", "bolt", "-data", data, "-tables", "orders", "-checkpoint", "", "-progress", "none")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		st, err := boltstore.Open(filepath.Join(data, "tablebridge.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if n := countEntities(t, st, "Orders"); n != 1200 {
			t.Fatalf("bolt holds %d entities", n)
		}
	})
	t.Run("dry run", func(t *testing.T) {
		code, out, _ := runCmd(t, migrateFn, "-from", src.ConnectionString(), "-dry-run", "-checkpoint", filepath.Join(dir, "dry.json"), "-progress", "none")
		if code != 0 || !strings.Contains(out, "1240 entities read (dry run, nothing written)") {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "dry.json")); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("a dry run wrote a checkpoint")
		}
	})
}

func TestMigrateCommandUsage(t *testing.T) {
	t.Parallel()
	src := protocoltest.New(t)
	cs := src.ConnectionString()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no source", []string{"-to", cs}, "-from is required"},
		{"no destination", []string{"-from", cs}, "-to or -store is required"},
		{"both destinations", []string{"-from", cs, "-to", cs, "-store", "bolt", "-data", "x"}, "not both"},
		{"bolt without data", []string{"-from", cs, "-store", "bolt"}, "needs -data"},
		{"unknown store", []string{"-from", cs, "-store", "mongo"}, "unknown -store"},
		{"bad rename", []string{"-from", cs, "-to", cs, "-rename", "nocolon"}, "old:new"},
		{"renamed twice", []string{"-from", cs, "-to", cs, "-rename", "a:b,A:c"}, "renamed twice"},
		{"unknown flag", []string{"-from", cs, "-bogus"}, "flag provided but not defined"},
		{"stray argument", []string{"-from", cs, "-to", cs, "extra"}, "unexpected argument"},
		{"bad progress", []string{"-from", cs, "-to", cs, "-progress", "fancy"}, "unknown -progress"},
		{"bad source", []string{"-from", "nonsense", "-to", cs}, "-from"},
		{"URL without SAS", []string{"-from", "http://127.0.0.1:1/devstoreaccount1", "-to", cs}, "no SAS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(t, migrateFn, tt.args...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant status 2 and %q", code, errOut, tt.want)
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		code, out, errOut := runCmd(t, migrateFn, "-h")
		if code != 0 || !strings.Contains(out, "usage: tablebridge migrate") || errOut != "" {
			t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
	})
	t.Run("runtime failure is status 1", func(t *testing.T) {
		code, _, errOut := runCmd(t, migrateFn, "-from", cs, "-to", cs, "-tables", "Nope", "-checkpoint", "", "-progress", "none")
		if code != 1 || !strings.Contains(errOut, `table "Nope"`) {
			t.Fatalf("exit %d:\n%s", code, errOut)
		}
	})
}

// The subprocess tests run the real command line in a child process (this
// test binary, re-executed through TestHelperCommand), so it can be killed
// or interrupted like a user's run.

const helperEnv = "TABLEBRIDGE_TEST_HELPER_ARGS"

// TestHelperCommand is the child's entry point; it does nothing in a
// normal test run.
func TestHelperCommand(t *testing.T) {
	t.Parallel()
	raw := os.Getenv(helperEnv)
	if raw == "" {
		t.Skip("helper process only")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	if err := run(args); err != nil {
		reportError(os.Stderr, err)
		os.Exit(exitCode(err))
	}
	os.Exit(0)
}

func helperCommand(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperCommand$")
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), helperEnv+"="+string(raw))
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	return cmd, &out
}

// waitForProgress waits until the checkpoint claims between lo and hi
// entities, and returns the count.
func waitForProgress(t *testing.T, path string, lo, hi int64, done <-chan struct{}) int64 {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatal("the child finished before it could be interrupted")
		default:
		}
		if cp, err := migrate.LoadCheckpoint(path); err == nil && cp != nil {
			var n int64
			for _, tb := range cp.Tables {
				n += tb.Copied()
			}
			if n >= lo {
				if n > hi {
					t.Fatalf("the checkpoint jumped to %d; the test wanted to stop below %d", n, hi)
				}
				return n
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the checkpoint never showed progress")
	return 0
}

func TestMigrateSurvivesKillAndInterrupt(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs child processes")
	}
	const total = 12000
	src := protocoltest.New(t)
	seedTable(t, src.Store, "Orders", total, 60)
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dst := protocoltest.New(t)
			cp := filepath.Join(t.TempDir(), "cp.json")
			args := []string{"migrate", "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-checkpoint", cp, "-progress", "log", "-progress-interval", "100ms"}
			// Slow enough to stop midway: about 4 s at 3000 entities/s.
			cmd, out := helperCommand(t, append(args, "-rate", "3000")...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var waitErr error
			go func() { waitErr = cmd.Wait(); close(done) }()
			at := waitForProgress(t, cp, 2000, total-2000, done)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			<-done
			status := cmd.ProcessState.ExitCode()
			if sig == syscall.SIGINT {
				if status != exitInterrupted || !strings.Contains(out.String(), "run the same command again to resume") {
					t.Fatalf("after SIGINT: exit %d (%v), output:\n%s", status, waitErr, out.String())
				}
			} else if status != -1 {
				t.Fatalf("after SIGKILL: exit %d", status)
			}
			cpAfter, err := migrate.LoadCheckpoint(cp)
			if err != nil || cpAfter == nil {
				t.Fatalf("checkpoint after %v: %v (a torn write?)", sig, err)
			}
			acknowledged := cpAfter.Tables[0].Copied()
			if acknowledged < at || acknowledged >= total {
				t.Fatalf("checkpoint holds %d after the signal, was %d before; total %d", acknowledged, at, total)
			}
			// Everything the checkpoint claims is in the destination.
			if got := countEntities(t, dst.Store, "Orders"); int64(got) < acknowledged {
				t.Fatalf("destination holds %d entities, the checkpoint claims %d", got, acknowledged)
			}

			cmd, out = helperCommand(t, args...)
			if err := cmd.Run(); err != nil {
				t.Fatalf("resume: %v\n%s", err, out.String())
			}
			want := fmt.Sprintf("Orders: %d entities copied, %d before resuming", total-acknowledged, acknowledged)
			if !strings.Contains(out.String(), want) {
				t.Fatalf("resume output lacks %q:\n%s", want, out.String())
			}
			if got := countEntities(t, dst.Store, "Orders"); got != total {
				t.Fatalf("destination holds %d entities, want %d", got, total)
			}
			cmd, out = helperCommand(t, "verify", "-from", src.ConnectionString(), "-to", dst.ConnectionString(), "-progress", "none")
			if err := cmd.Run(); err != nil {
				t.Fatalf("verify after resume: %v\n%s", err, out.String())
			}
		})
	}
}
