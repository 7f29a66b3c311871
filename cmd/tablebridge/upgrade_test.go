package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/localproc"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// The data directories of earlier releases, and of this one, that every
// later release must serve (testdata/upgrade): each one was written
// through the Go SDK by the real `tablebridge serve` of its commit (see
// TestWriteUpgradeFixture), and its .json is what that server answered
// when read back, ETags included.
var upgradeFixtures = []struct {
	name   string
	engine string
}{
	// serve at commit ee98035, the last before pebble: bolt, its only
	// embedded engine (layout format 1).
	{"bolt-ee98035", engineBolt},
	// serve -store pebble when pebble came (key layout 1, Pebble format
	// FormatValueSeparation).
	{"pebble-layout1", enginePebble},
}

// The fixtures' second account, beside devstoreaccount1, so that a move
// has more than one account to carry.
var upgradeAccount = auth.Account{Name: "upgradetwo", Keys: [][]byte{[]byte("upgrade-fixture-key-0123456789ab")}}

// TestUpgradeKeepsEarlierData serves each fixture's data directory with
// this build, as serve's default does (bolt for an earlier release's
// bbolt file, saying so and how to move; pebble for a pebble directory),
// and reads what its writer read: the same tables, entities, ETags, ACLs
// and service properties. Each is then moved to the other engine with
// migrate -from-data (verify included) and read again, with the same
// ETags.
func TestUpgradeKeepsEarlierData(t *testing.T) {
	t.Parallel()
	for _, f := range upgradeFixtures {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			want, err := os.ReadFile(filepath.Join("testdata", "upgrade", f.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "data")
			unpackDir(t, filepath.Join("testdata", "upgrade", f.name+".tar.gz"), dir)

			lines := readUpgradeData(t, ctx, dir, engineAuto, want)
			if !strings.Contains(lines[0], "(store: "+f.engine+" ") {
				t.Errorf("serve opened %q; want the %s store", lines[0], f.engine)
			}
			advised := strings.Contains(strings.Join(lines, "\n"), "tablebridge migrate -from-data "+dir+" -store pebble -data "+dir+"-pebble")
			if advised != (f.engine == engineBolt) {
				t.Errorf("serve's advice to move (%v) on %s: %q", advised, f.engine, lines)
			}

			other := enginePebble
			if f.engine == enginePebble {
				other = engineBolt
			}
			moved := filepath.Join(t.TempDir(), "moved")
			status, stdout, stderr := runCmd(t, migrateFn, "-from-data", dir, "-store", other, "-data", moved, "-progress", "none")
			if status != 0 || !strings.Contains(stdout, "moved and verified") {
				t.Fatalf("migrate -from-data: status %d\n%s%s", status, stdout, stderr)
			}
			lines = readUpgradeData(t, ctx, moved, other, want)
			if !strings.Contains(lines[0], "(store: "+other+" ") {
				t.Errorf("serve opened %q; want the %s store", lines[0], other)
			}
		})
	}
}

// readUpgradeData serves dir with -store engine and the fixtures'
// accounts, compares what it answers with want, and returns serve's
// start-up lines.
func readUpgradeData(t *testing.T, ctx context.Context, dir, engine string, want []byte) []string {
	t.Helper()
	serveCtx, stop := context.WithCancel(ctx)
	lines, done := serveUntil(t, serveCtx, serveConfig{listen: "127.0.0.1:0", dataDir: dir, storeKind: engine,
		accounts: auth.AccountList{auth.DevStoreAccount(), upgradeAccount}},
		func(line string) bool { return strings.Contains(line, "AccountName="+upgradeAccount.Name) })
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	endpoint := find(t, lines, `TableEndpoint=(http://[^/]+)/`)
	got := upgradeSnapshot(t, ctx, endpoint)
	if !bytes.Equal(got, want) {
		t.Errorf("served %s with -store %s; the answers differ from the writer's:\n%s", dir, engine, firstDifference(got, want))
	}
	return lines
}

// upgradeSnapshot reads, from the server at endpoint, every table of both
// accounts with its entities (full metadata, in key order) and stored
// access policies, and the accounts' service properties, as indented JSON.
// The metadata fields that name the server's address are left out.
func upgradeSnapshot(t *testing.T, ctx context.Context, endpoint string) []byte {
	t.Helper()
	snap := map[string]any{}
	for _, acc := range []auth.Account{auth.DevStoreAccount(), upgradeAccount} {
		svc := protocoltest.NewServiceClient(t, connectionString("http", strings.TrimPrefix(endpoint, "http://"), acc))
		account := map[string]any{}
		props, err := svc.GetProperties(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		account["serviceProperties"] = props.ServiceProperties
		tables := map[string]any{}
		pager := svc.NewListTablesPager(nil)
		for pager.More() {
			page, err := pager.NextPage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, tp := range page.Tables {
				tables[*tp.Name] = tableSnapshot(t, ctx, svc.NewClient(*tp.Name))
			}
		}
		account["tables"] = tables
		snap[acc.Name] = account
	}
	b, err := json.MarshalIndent(snap, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func tableSnapshot(t *testing.T, ctx context.Context, client *aztables.Client) map[string]any {
	t.Helper()
	acl, err := client.GetAccessPolicy(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var entities []map[string]any
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Format: to.Ptr(aztables.MetadataFormatFull)})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range page.Entities {
			var e map[string]any
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"odata.metadata", "odata.id", "odata.editLink"} {
				delete(e, k)
			}
			entities = append(entities, e)
		}
	}
	return map[string]any{"acl": acl.SignedIdentifiers, "entities": entities}
}

// firstDifference shows the first line where got and want part.
func firstDifference(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d: got %s\n         want %s", i+1, g[i], w[i])
		}
	}
	return fmt.Sprintf("got %d lines, want %d", len(g), len(w))
}

// TestWriteUpgradeFixture writes one fixture: with
// TABLEBRIDGE_UPGRADE_FIXTURE=name, it runs TABLEBRIDGE_UPGRADE_BINARY (the
// release's tablebridge; this build when unset) with -store
// TABLEBRIDGE_UPGRADE_STORE (that binary's default when unset), writes the
// fixture's data through the Go SDK, reads it back, stops the server and
// saves the data directory and the answers under testdata/upgrade. For
// an earlier release, build its binary from its commit first:
//
//	git archive ee98035 | tar -x -C /tmp/rel && (cd /tmp/rel && go build -o /tmp/tablebridge-ee98035 ./cmd/tablebridge)
//	TABLEBRIDGE_UPGRADE_FIXTURE=bolt-ee98035 TABLEBRIDGE_UPGRADE_BINARY=/tmp/tablebridge-ee98035 go test -run TestWriteUpgradeFixture ./cmd/tablebridge
//	TABLEBRIDGE_UPGRADE_FIXTURE=pebble-layout1 TABLEBRIDGE_UPGRADE_STORE=pebble go test -run TestWriteUpgradeFixture ./cmd/tablebridge
func TestWriteUpgradeFixture(t *testing.T) {
	name := os.Getenv("TABLEBRIDGE_UPGRADE_FIXTURE")
	if name == "" {
		t.Skip("writes a fixture when TABLEBRIDGE_UPGRADE_FIXTURE names one")
	}
	binary := os.Getenv("TABLEBRIDGE_UPGRADE_BINARY")
	if binary == "" {
		binary = serveproc.Binary(t)
	}
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"-data", dir, "-account", auth.DevStoreAccountName + ":" + auth.DevStoreAccountKey,
		"-account", upgradeAccount.Name + ":" + base64.StdEncoding.EncodeToString(upgradeAccount.Keys[0])}
	if s := os.Getenv("TABLEBRIDGE_UPGRADE_STORE"); s != "" {
		args = append(args, "-store", s)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	start := func() *localproc.Process {
		p, err := localproc.Start(ctx, localproc.Spec{
			Name: "tablebridge serve", ErrPrefix: "upgrade fixture", Program: binary, ProbePath: "/",
			WorkDirPattern: "tablebridge-upgrade-*",
			Args: func(port int) []string {
				return append([]string{"serve", "-listen", fmt.Sprintf("127.0.0.1:%d", port)}, args...)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	stop := func(p *localproc.Process) {
		if err := p.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		<-p.Done()
	}
	// Two runs: a log-structured engine keeps the first run's writes in
	// its tables once it has reopened, and the second run's (which change
	// and delete some of them) in its log.
	p := start()
	writeUpgradeData(t, ctx, p.URL, 1)
	stop(p)
	p = start()
	writeUpgradeData(t, ctx, p.URL, 2)
	snap := upgradeSnapshot(t, ctx, p.URL)
	stop(p)
	if err := os.WriteFile(filepath.Join("testdata", "upgrade", name+".json"), snap, 0o644); err != nil {
		t.Fatal(err)
	}
	packDir(t, dir, filepath.Join("testdata", "upgrade", name+".tar.gz"))
}

// writeUpgradeData writes the fixtures' data through the Go SDK, in two
// runs. The first: tables named in mixed case, entities of every Edm type
// and their extremes, empty and non-ASCII keys. The second: an entity
// replaced and one merged (new ETags), one deleted and a table of entities
// deleted, a table's stored access policies, service properties with a
// CORS rule, and a second account's table.
func writeUpgradeData(t *testing.T, ctx context.Context, url string, run int) {
	t.Helper()
	host := strings.TrimPrefix(url, "http://")
	svc := protocoltest.NewServiceClient(t, connectionString("http", host, auth.DevStoreAccount()))
	two := protocoltest.NewServiceClient(t, connectionString("http", host, upgradeAccount))
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	orders := svc.NewClient("Orders")
	if run == 1 {
		for _, name := range []string{"Orders", "customers", "Gone"} {
			must(svc.CreateTable(ctx, name, nil))
		}
		for _, body := range []string{
			`{"PartitionKey":"p1","RowKey":"r1","S":"text","I32":2147483647,"I64@odata.type":"Edm.Int64","I64":"-9223372036854775808",` +
				`"D@odata.type":"Edm.Double","D":"NaN","Inf@odata.type":"Edm.Double","Inf":"-Infinity","Z@odata.type":"Edm.Double","Z":"-0",` +
				`"Small":5E-324,"B":true,"DT@odata.type":"Edm.DateTime","DT":"1601-01-01T00:00:00.0000001Z",` +
				`"G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833","Bin@odata.type":"Edm.Binary","Bin":"AAEC/w=="}`,
			`{"PartitionKey":"","RowKey":"","Empty":""}`,
			`{"PartitionKey":"p1","RowKey":"héllo 😀 'quoted'","N":1}`,
			`{"PartitionKey":"p2","RowKey":"replaced","N":1}`,
			`{"PartitionKey":"p2","RowKey":"merged","A":1}`,
			`{"PartitionKey":"p2","RowKey":"deleted"}`,
		} {
			must(orders.AddEntity(ctx, []byte(body), nil))
		}
		for i := range 10 {
			must(svc.NewClient("Gone").AddEntity(ctx, fmt.Appendf(nil, `{"PartitionKey":"p","RowKey":"%d"}`, i), nil))
		}
		return
	}
	must(orders.UpdateEntity(ctx, []byte(`{"PartitionKey":"p2","RowKey":"replaced","N":2}`), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace}))
	must(orders.UpdateEntity(ctx, []byte(`{"PartitionKey":"p2","RowKey":"merged","B":"two"}`), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}))
	must(orders.DeleteEntity(ctx, "p2", "deleted", nil))
	must(svc.DeleteTable(ctx, "Gone", nil))
	start, expiry := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC)
	must(orders.SetAccessPolicy(ctx, &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
		{ID: to.Ptr("readers"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("r")}},
	}}))
	must(svc.SetProperties(ctx, aztables.ServiceProperties{Cors: []*aztables.CorsRule{{
		AllowedOrigins: to.Ptr("https://example.com"), AllowedMethods: to.Ptr("GET,PUT"), AllowedHeaders: to.Ptr("*"),
		ExposedHeaders: to.Ptr("*"), MaxAgeInSeconds: to.Ptr(int32(60)),
	}}}, nil))
	must(two.CreateTable(ctx, "Second", nil))
	for i := range 25 {
		must(two.NewClient("Second").AddEntity(ctx, fmt.Appendf(nil, `{"PartitionKey":"p%d","RowKey":"%03d","N":%d}`, i%3, i, i), nil))
	}
}

// packDir writes dir's files (tablebridge.pid left out) as a gzipped tar.
func packDir(t *testing.T, dir, out string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == pidFileName {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Mode: 0o600, Size: int64(len(b))}); err != nil {
			return err
		}
		_, err = tw.Write(b)
		return err
	})
	if err == nil {
		err = tw.Close()
	}
	if err == nil {
		err = zw.Close()
	}
	if err == nil {
		err = os.WriteFile(out, buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// unpackDir extracts a packDir archive into dir.
func unpackDir(t *testing.T, archive, dir string) {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(path, dir+string(filepath.Separator)) {
			t.Fatalf("%s: entry %q outside the directory", archive, h.Name)
		}
		b, err := io.ReadAll(tr)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(path), 0o755)
		}
		if err == nil {
			err = os.WriteFile(path, b, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
