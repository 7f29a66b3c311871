package azcli_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/internal/serveproc"
)

func TestMain(m *testing.M) { os.Exit(serveproc.Main(m)) }

const installHint = "run infra/azure-cli/install.sh (make tools; as root it installs Debian's azure-cli) or set TABLEBRIDGE_AZ"

// cli runs az against one server with an isolated configuration.
type cli struct {
	t       *testing.T
	az      string
	env     []string
	conn    string
	calls   int
	elapsed time.Duration
}

func newCLI(t *testing.T, az string, srv *serveproc.Server) *cli {
	t.Helper()
	// A closed loopback port as proxy: anything but the server (telemetry,
	// the extension index, version checks) fails at once and stays local.
	deadPort, err := localproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("http://127.0.0.1:%d", deadPort)
	env := append(os.Environ(),
		"AZURE_CONFIG_DIR="+t.TempDir(),
		"AZURE_CORE_COLLECT_TELEMETRY=false",
		"AZURE_CORE_ONLY_SHOW_ERRORS=true",
		"AZURE_CORE_NO_COLOR=true",
		"AZURE_CORE_SURVEY_MESSAGE=false",
		"AZURE_EXTENSION_USE_DYNAMIC_INSTALL=no",
		"AZURE_STORAGE_AUTH_MODE=key",
		"HTTP_PROXY="+dead, "HTTPS_PROXY="+dead, "http_proxy="+dead, "https_proxy="+dead,
		"NO_PROXY=127.0.0.1,localhost", "no_proxy=127.0.0.1,localhost",
		"PYTHONDONTWRITEBYTECODE=1",
	)
	return &cli{t: t, az: az, env: env, conn: srv.ConnectionString}
}

// run runs `az storage ARGS -o json` with the connection string unless
// args name other credentials, and returns stdout, stderr and the error.
func (c *cli) run(args ...string) (stdout, stderr string, err error) {
	c.t.Helper()
	full := append([]string{"storage"}, args...)
	if !contains(args, "--sas-token") {
		full = append(full, "--connection-string", c.conn)
	}
	full = append(full, "-o", "json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.az, full...)
	cmd.Env = c.env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	c.elapsed += time.Since(start)
	c.calls++
	return out.String(), errOut.String(), err
}

// ok runs a command that must succeed and decodes its JSON output into v
// (when v is not nil).
func (c *cli) ok(v any, args ...string) {
	c.t.Helper()
	stdout, stderr, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("az storage %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr)
	}
	if v != nil {
		dec := json.NewDecoder(strings.NewReader(stdout))
		dec.UseNumber() // an Int64 beyond 2^53 must read back exactly
		if err := dec.Decode(v); err != nil {
			c.t.Fatalf("az storage %s printed %q: %v", strings.Join(args, " "), stdout, err)
		}
	}
}

// fails runs a command that must fail, saying want: az prints the
// service's message, or for some statuses a text of its own.
func (c *cli) fails(want string, args ...string) {
	c.t.Helper()
	stdout, stderr, err := c.run(args...)
	if err == nil {
		c.t.Fatalf("az storage %s succeeded (%s), want a failure saying %q", strings.Join(args, " "), stdout, want)
	}
	if !strings.Contains(stderr, want) {
		c.t.Errorf("az storage %s failed with %q, want %q", strings.Join(args, " "), stderr, want)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestAzureCLI runs the CLI scenario on each store, the stores in
// parallel: each az call spends most of its seconds starting Python.
func TestAzureCLI(t *testing.T) {
	az := serveproc.Require(t, "the Azure CLI", installHint, nil, os.Getenv("TABLEBRIDGE_AZ"), "/usr/bin/az", "az")
	serveproc.Binary(t) // build once, before the parallel subtests
	for _, store := range serveproc.Stores {
		t.Run(store, func(t *testing.T) {
			t.Parallel()
			srv := serveproc.Start(t, store)
			c := newCLI(t, az, srv)
			scenario(t, c, srv, "az"+store)
			t.Logf("az on %s: %d commands in %v", store, c.calls, c.elapsed.Round(time.Millisecond))
		})
	}
}

func scenario(t *testing.T, c *cli, srv *serveproc.Server, table string) {
	var created struct{ Created bool }
	c.ok(&created, "table", "create", "-n", table)
	if !created.Created {
		t.Fatalf("table create: %+v", created)
	}
	var names []string
	c.ok(&names, "table", "list", "--query", "[?name=='"+table+"'].name")
	if len(names) != 1 {
		t.Errorf("table list: %v", names)
	}

	// All 8 Edm types, which az sends as strings next to their
	// @odata.type, the way Azure Storage Explorer does.
	c.ok(nil, "entity", "insert", "-t", table, "--if-exists", "fail", "-e", "PartitionKey=p", "RowKey=001", "S=héllo",
		"B=true", "B@odata.type=Edm.Boolean", "I32=42", "I32@odata.type=Edm.Int32",
		"I64=9007199254740993", "I64@odata.type=Edm.Int64", "D=1.5", "D@odata.type=Edm.Double",
		"G=0b7a1d3c-5f4e-4a2b-9c8d-7e6f5a4b3c2d", "G@odata.type=Edm.Guid",
		"DT=2024-01-02T03:04:05.678Z", "DT@odata.type=Edm.DateTime", "BIN=tablebridge", "BIN@odata.type=Edm.Binary")
	var e map[string]any
	c.ok(&e, "entity", "show", "-t", table, "--partition-key", "p", "--row-key", "001")
	i64, _ := e["I64"].(map[string]any)
	for k, want := range map[string]any{
		"S": "héllo", "B": true, "I32": json.Number("42"), "D": json.Number("1.5"), "G": "0b7a1d3c-5f4e-4a2b-9c8d-7e6f5a4b3c2d",
		"DT": "2024-01-02T03:04:05.678000+00:00", "BIN": base64.StdEncoding.EncodeToString([]byte("tablebridge")),
	} {
		if e[k] != want {
			t.Errorf("entity show: %s = %#v, want %#v", k, e[k], want)
		}
	}
	if i64 == nil || i64["edm_type"] != "Edm.Int64" || i64["value"] != json.Number("9007199254740993") {
		t.Errorf("entity show: I64 = %#v, want Edm.Int64 9007199254740993", e["I64"])
	}
	etag, _ := e["etag"].(string)
	c.fails("The specified entity already exists", "entity", "insert", "-t", table, "--if-exists", "fail", "-e", "PartitionKey=p", "RowKey=001")

	// ETags: the current one replaces, the stale one is 412.
	var replaced struct{ Etag string }
	c.ok(&replaced, "entity", "replace", "-t", table, "-e", "PartitionKey=p", "RowKey=001", "S=replaced", "--if-match", etag)
	c.fails("UpdateConditionNotSatisfied", "entity", "replace", "-t", table, "-e", "PartitionKey=p", "RowKey=001", "S=late", "--if-match", etag)
	c.ok(nil, "entity", "merge", "-t", table, "-e", "PartitionKey=p", "RowKey=001", "Extra=merged", "--if-match", replaced.Etag)
	var upserted struct{ Etag string }
	c.ok(&upserted, "entity", "insert", "-t", table, "--if-exists", "replace", "-e", "PartitionKey=p", "RowKey=002", "S=second")

	// A query with $filter and $select, one entity per page.
	type page struct {
		Items      []map[string]any
		NextMarker map[string]string
	}
	var first, second page
	query := []string{"entity", "query", "-t", table, "--filter", "PartitionKey eq 'p' and S ne 'x'", "--select", "RowKey", "S", "--num-results", "1"}
	c.ok(&first, query...)
	if len(first.Items) != 1 || first.Items[0]["RowKey"] != "001" || first.Items[0]["S"] != "replaced" || first.NextMarker["nextrowkey"] == "" {
		t.Fatalf("query page 1: %+v", first)
	}
	if _, ok := first.Items[0]["Extra"]; ok {
		t.Errorf("$select returned Extra: %v", first.Items[0])
	}
	c.ok(&second, append(query, "--marker", "nextpartitionkey="+first.NextMarker["nextpartitionkey"], "nextrowkey="+first.NextMarker["nextrowkey"])...)
	if len(second.Items) != 1 || second.Items[0]["RowKey"] != "002" || len(second.NextMarker) != 0 {
		t.Errorf("query page 2: %+v", second)
	}

	// A table SAS az signs, used by az: reads work, deletes are refused.
	var sas string
	c.ok(&sas, "table", "generate-sas", "-n", table, "--permissions", "r", "--expiry", time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04Z"))
	sasArgs := []string{"-t", table, "--account-name", srv.Account, "--sas-token", sas, "--table-endpoint", srv.AccountURL}
	var viaSAS page
	c.ok(&viaSAS, append([]string{"entity", "query", "--filter", "RowKey eq '002'"}, sasArgs...)...)
	if len(viaSAS.Items) != 1 || viaSAS.Items[0]["S"] != "second" {
		t.Errorf("query with the SAS: %+v", viaSAS)
	}
	// az replaces the service's 403 with its own text about roles.
	c.fails("You do not have the required permissions", append([]string{"entity", "delete", "--partition-key", "p", "--row-key", "002"}, sasArgs...)...)

	// Get Table Service Stats, which az sends to the secondary location.
	var stats struct {
		GeoReplication struct{ Status string }
	}
	c.ok(&stats, "table", "stats")
	if stats.GeoReplication.Status != "live" {
		t.Errorf("table stats: %+v", stats)
	}

	var deleted struct{ Deleted bool }
	c.ok(&deleted, "entity", "delete", "-t", table, "--partition-key", "p", "--row-key", "002", "--if-match", upserted.Etag)
	c.ok(&deleted, "table", "delete", "-n", table)
	if !deleted.Deleted {
		t.Errorf("table delete: %+v", deleted)
	}
}
