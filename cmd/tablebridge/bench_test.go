package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/loadgen"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

func TestParseBenchFlags(t *testing.T) {
	t.Parallel()
	const connStr = "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10012/acct;"
	cases := []struct {
		name    string
		args    []string
		check   func(t *testing.T, cfg loadgen.Config, asJSON bool)
		wantErr string
	}{
		{name: "defaults", args: nil, check: func(t *testing.T, cfg loadgen.Config, asJSON bool) {
			if !reflect.DeepEqual(cfg, loadgen.DefaultConfig()) || asJSON {
				t.Errorf("got %+v, want the defaults", cfg)
			}
		}},
		{name: "connection string", args: []string{"-connection-string", connStr, "-json"}, check: func(t *testing.T, cfg loadgen.Config, asJSON bool) {
			if cfg.Endpoint != "http://127.0.0.1:10012/acct" || cfg.Account != "acct" || cfg.Key != "a2V5" || !asJSON {
				t.Errorf("got %+v", cfg)
			}
		}},
		{name: "ops alone is not cut short by the default duration", args: []string{"-ops", "500"}, check: func(t *testing.T, cfg loadgen.Config, _ bool) {
			if cfg.Ops != 500 || cfg.Duration != 0 {
				t.Errorf("ops %d duration %v", cfg.Ops, cfg.Duration)
			}
		}},
		{name: "ops and duration", args: []string{"-ops", "500", "-duration", "3s"}, check: func(t *testing.T, cfg loadgen.Config, _ bool) {
			if cfg.Ops != 500 || cfg.Duration != 3*time.Second {
				t.Errorf("ops %d duration %v", cfg.Ops, cfg.Duration)
			}
		}},
		{name: "phases and sizes", args: []string{"-phases", "batch,get", "-clients", "4", "-entity-size", "1000", "-partition-size", "200", "-table", "azurite"},
			check: func(t *testing.T, cfg loadgen.Config, _ bool) {
				if !reflect.DeepEqual(cfg.Phases, []loadgen.Phase{loadgen.PhaseBatch, loadgen.PhaseGet}) || cfg.Clients != 4 ||
					cfg.EntitySize != 1000 || cfg.PartitionSize != 200 || cfg.TablePrefix != "azurite" {
					t.Errorf("got %+v", cfg)
				}
			}},
		{name: "direct dynamodb", args: []string{"-direct-dynamodb", " http://127.0.0.1:8000 ", "-ops", "5"}, check: func(t *testing.T, cfg loadgen.Config, _ bool) {
			if cfg.DynamoDBEndpoint != "http://127.0.0.1:8000" || cfg.Ops != 5 {
				t.Errorf("got %+v", cfg)
			}
		}},
		{name: "direct dynamodb conflicts with endpoint", args: []string{"-direct-dynamodb", "http://127.0.0.1:8000", "-endpoint", "http://127.0.0.1:1/a"}, wantErr: "exclusive"},
		{name: "direct dynamodb conflicts with connection string", args: []string{"-direct-dynamodb", "http://127.0.0.1:8000", "-connection-string", connStr}, wantErr: "exclusive"},
		{name: "direct dynamodb without url", args: []string{"-direct-dynamodb", " "}, wantErr: "needs a URL"},
		{name: "connection string conflicts with endpoint", args: []string{"-connection-string", connStr, "-endpoint", "http://127.0.0.1:1/a"}, wantErr: "exclusive"},
		{name: "bad connection string", args: []string{"-connection-string", "AccountName=a"}, wantErr: "needs AccountKey"},
		{name: "unknown phase", args: []string{"-phases", "insert,delete"}, wantErr: `unknown phase "delete"`},
		{name: "stray argument", args: []string{"now"}, wantErr: `unexpected argument "now"`},
		{name: "unknown flag", args: []string{"-threads", "4"}, wantErr: "flag provided but not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, asJSON, err := parseBenchFlags(c.args, &bytes.Buffer{})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, cfg, asJSON)
		})
	}
}

func TestBenchCommandErrors(t *testing.T) {
	t.Parallel()
	t.Run("help", func(t *testing.T) {
		var out, progress bytes.Buffer
		if err := bench(context.Background(), []string{"-h"}, &out, &progress); exitCode(err) != 0 || !errors.Is(err, errShown) {
			t.Fatalf("error %v, want help shown (status 0)", err)
		}
		if !strings.Contains(out.String(), "-allow-remote") {
			t.Errorf("usage lacks -allow-remote:\n%s", out.String())
		}
	})
	t.Run("remote endpoint refused", func(t *testing.T) {
		var out, progress bytes.Buffer
		err := bench(context.Background(), []string{"-endpoint", "https://acct.table.core.windows.net", "-ops", "1"}, &out, &progress)
		if !errors.Is(err, loadgen.ErrRemoteEndpoint) || out.Len() != 0 {
			t.Fatalf("error %v, output %q; want ErrRemoteEndpoint and no report", err, out.String())
		}
	})
	t.Run("remote dynamodb refused", func(t *testing.T) {
		var out, progress bytes.Buffer
		err := bench(context.Background(), []string{"-direct-dynamodb", "https://dynamodb.us-east-1.amazonaws.com", "-ops", "1"}, &out, &progress)
		if !errors.Is(err, loadgen.ErrRemoteEndpoint) || out.Len() != 0 {
			t.Fatalf("error %v, output %q; want ErrRemoteEndpoint and no report", err, out.String())
		}
	})
}

// TestBenchAgainstTheRealServer runs every phase, by op count, against the
// real handler over bbolt: partitions of 1500 rows make the query phase
// follow the server's continuation.
func TestBenchAgainstTheRealServer(t *testing.T) {
	t.Parallel()
	srv := protocoltest.New(t)
	var out, progress bytes.Buffer
	args := []string{"-endpoint", srv.AccountURL("devstoreaccount1"), "-ops", "20", "-clients", "4",
		"-partition-size", "1500", "-query-partitions", "2", "-json"}
	if err := bench(context.Background(), args, &out, &progress); err != nil {
		t.Fatalf("bench: %v\n%s\n%s", err, out.String(), progress.String())
	}
	var report struct {
		Phases []struct {
			Phase    string
			Ops      int64
			Errors   int64
			Rows     int64
			Requests int64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	want := map[string][3]int64{ // ops, rows, requests
		"insert": {20, 20, 20},
		"get":    {20, 20, 20},
		"query":  {20, 20 * 1500, 20 * 2},
		"batch":  {20, 20 * 100, 20},
	}
	if len(report.Phases) != len(want) {
		t.Fatalf("%d phases in\n%s", len(report.Phases), out.String())
	}
	for _, p := range report.Phases {
		w := want[p.Phase]
		if p.Errors != 0 || p.Ops != w[0] || p.Rows != w[1] || p.Requests != w[2] {
			t.Errorf("%s: ops %d rows %d requests %d errors %d; want ops %d rows %d requests %d\n%s",
				p.Phase, p.Ops, p.Rows, p.Requests, p.Errors, w[0], w[1], w[2], out.String())
		}
	}
}
