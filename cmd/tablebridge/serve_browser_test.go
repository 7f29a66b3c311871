package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// TestBrowserFlag: -browser auto serves the page on loopback addresses
// only; on and off decide for any address.
func TestBrowserFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, listen string
		want         bool
	}{
		{"auto", "127.0.0.1:10002", true},
		{"auto", "[::1]:10002", true},
		{"auto", "localhost:10002", true},
		{"auto", "0.0.0.0:10002", false},
		{"auto", ":10002", false},
		{"auto", "192.168.1.5:10002", false},
		{"on", "0.0.0.0:10002", true},
		{"off", "127.0.0.1:10002", false},
	} {
		f := browserFlags{mode: tc.mode}
		if got, err := f.enabled(tc.listen); err != nil || got != tc.want {
			t.Errorf("-browser %s -listen %s: %v, %v; want %v", tc.mode, tc.listen, got, err, tc.want)
		}
	}
	f := browserFlags{mode: "yes"}
	if _, err := f.enabled("127.0.0.1:10002"); err == nil {
		t.Error("-browser yes accepted")
	}
}

// TestBrowserOffLeavesTheAPI: with -browser off, /_browser/ is no page but
// the REST API's answer to a path that names no account.
func TestBrowserOffLeavesTheAPI(t *testing.T) {
	t.Parallel()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	connStr, done := startServeConfig(t, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: t.TempDir(), storeKind: "bolt",
		accounts: auth.AccountList{auth.DevStoreAccount()}, browser: browserFlags{mode: "off"}})
	endpoint := connStr[strings.Index(connStr, "TableEndpoint=")+len("TableEndpoint="):]
	base := strings.TrimSuffix(strings.TrimSuffix(endpoint, ";"), "/devstoreaccount1")
	resp, err := http.Get(base + "/_browser/app.js")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidUri" {
		t.Errorf("/_browser/app.js with -browser off: %d %s, want the API's 400 InvalidUri", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	stop()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

// TestDataBrowser drives the data browser in headless Chromium against
// serve, and checks with the Go SDK what it did: tables listed, entities
// paged and filtered with their Edm types, one edited, one inserted, one
// deleted, a table created and deleted, errors shown. Screenshots go to
// TABLEBRIDGE_SCREENSHOTS when it names a directory.
func TestDataBrowser(t *testing.T) {
	t.Parallel()
	chromiumPath := serveproc.Require(t, "chromium", "run infra/browser/install.sh (installs chromium when root)", nil,
		"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
	ctx, stop := context.WithCancel(t.Context())
	lines, done := serveUntil(t, ctx, serveConfig{listen: "127.0.0.1:0", dataDir: t.TempDir(), storeKind: "bolt",
		accounts: auth.AccountList{auth.DevStoreAccount()}, browser: browserFlags{mode: "auto"}},
		func(line string) bool { return strings.Contains(line, "/_browser/#") })
	link := find(t, lines, `^\s*(http://\S+/_browser/#\S+)$`)
	connStr := find(t, lines, `(DefaultEndpointsProtocol=\S+)`)
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	base := link[:strings.Index(link, "/_browser/")]

	svc, err := aztables.NewServiceClientFromConnectionString(connStr, &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"people", "other"} {
		if _, err := svc.CreateTable(ctx, name, nil); err != nil {
			t.Fatal(err)
		}
	}
	people := svc.NewClient("people")
	seed := []string{
		`{"PartitionKey":"p1","RowKey":"alice","Name":"Alice","Age":34,"Score":9.5,"Big@odata.type":"Edm.Int64","Big":"9007199254740993","Active":true,` +
			`"Born@odata.type":"Edm.DateTime","Born":"1990-04-01T08:30:00.1234567Z","Id@odata.type":"Edm.Guid","Id":"3c9d3ab2-0f5e-4c4e-9a43-1b2a0c5d7e11",` +
			`"Photo@odata.type":"Edm.Binary","Photo":"AAECAw=="}`,
		`{"PartitionKey":"p1","RowKey":"bob","Name":"Bob","Age":28,"Score@odata.type":"Edm.Double","Score":7}`,
	}
	for i := range 60 {
		seed = append(seed, fmt.Sprintf(`{"PartitionKey":"p2","RowKey":"r%02d","N":%d}`, i, i))
	}
	for _, e := range seed {
		if _, err := people.AddEntity(ctx, []byte(e), nil); err != nil {
			t.Fatal(err)
		}
	}

	c := startChromium(t, chromiumPath, 1280, 720)
	shots := os.Getenv("TABLEBRIDGE_SCREENSHOTS")
	shot := func(name string) {
		png := c.screenshot()
		if len(png) < 1000 || string(png[1:4]) != "PNG" {
			t.Errorf("screenshot %s: %d bytes, no PNG", name, len(png))
		}
		if shots != "" {
			if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	click := func(selector string) {
		t.Helper()
		c.eval(fmt.Sprintf(`document.querySelector(%q).click()`, selector), nil)
	}
	setValue := func(selector, value string) {
		t.Helper()
		c.eval(fmt.Sprintf(`document.querySelector(%q).value = %q`, selector, value), nil)
	}
	clickTable := func(name string) {
		t.Helper()
		c.eval(fmt.Sprintf(`[...document.querySelectorAll('#tables li')].find((li) => li.textContent === %q).click()`, name), nil)
	}
	status := func(want string) {
		t.Helper()
		c.waitFor(fmt.Sprintf(`document.getElementById('status').textContent.includes(%q)`, want))
	}

	t.Run("tables", func(t *testing.T) {
		c.t = t
		c.navigate(link)
		c.waitFor(`document.querySelectorAll('#tables li').length === 2`)
		var got []string
		c.eval(`[...document.querySelectorAll('#tables li')].map((li) => li.textContent)`, &got)
		if strings.Join(got, ",") != "other,people" {
			t.Errorf("tables %v", got)
		}
		var href string
		c.eval(`location.href`, &href)
		if strings.Contains(href, "#") {
			t.Errorf("the SAS stayed in the address bar: %s", href)
		}
	})

	t.Run("entities with their Edm types", func(t *testing.T) {
		c.t = t
		clickTable("people")
		c.waitFor(`document.getElementById('page-info').textContent === 'page 1, 50 entities, more follow'`)
		// Each cell of alice's and bob's rows: column -> "value type".
		var rows map[string]map[string]string
		c.eval(`(() => {
			const cols = [...document.querySelectorAll('#entities thead th')].map((th) => th.textContent);
			const out = {};
			for (const tr of document.querySelectorAll('#entities tbody tr')) {
				const cells = {};
				[...tr.cells].forEach((td, i) => { if (td.textContent) cells[cols[i]] = td.querySelector('.val').textContent + ' ' + td.querySelector('.type').textContent; });
				out[cells.RowKey.split(' ')[0]] = cells;
			}
			return out;
		})()`, &rows)
		want := map[string]string{
			"Name": "Alice Edm.String", "Age": "34 Edm.Int32", "Score": "9.5 Edm.Double", "Big": "9007199254740993 Edm.Int64",
			"Active": "true Edm.Boolean", "Born": "1990-04-01T08:30:00.1234567Z Edm.DateTime",
			"Id": "3c9d3ab2-0f5e-4c4e-9a43-1b2a0c5d7e11 Edm.Guid", "Photo": "AAECAw== Edm.Binary",
		}
		for k, v := range want {
			if rows["alice"][k] != v {
				t.Errorf("alice's %s shows %q, want %q", k, rows["alice"][k], v)
			}
		}
		if !strings.HasSuffix(rows["alice"]["Timestamp"], " Edm.DateTime") {
			t.Errorf("alice's Timestamp shows %q", rows["alice"]["Timestamp"])
		}
		// A whole Double, which the answer writes unannotated as 7.0.
		if rows["bob"]["Score"] != "7 Edm.Double" || rows["bob"]["Age"] != "28 Edm.Int32" {
			t.Errorf("bob's row %v", rows["bob"])
		}
		shot("databrowser-table.png")
		click("#next-page")
		c.waitFor(`document.getElementById('page-info').textContent === 'page 2, 12 entities'`)
	})

	t.Run("filter", func(t *testing.T) {
		c.t = t
		setValue("#filter", "Age gt 30")
		click("#apply-filter")
		c.waitFor(`document.getElementById('page-info').textContent === 'page 1, 1 entities'`)
		var rk string
		c.eval(`document.querySelector('#entities tbody tr').cells[1].querySelector('.val').textContent`, &rk)
		if rk != "alice" {
			t.Errorf("Age gt 30 shows %q", rk)
		}
		setValue("#filter", "Age gt")
		click("#apply-filter")
		c.waitFor(`document.getElementById('status').className === 'error'`)
		var msg string
		c.eval(`document.getElementById('status').textContent`, &msg)
		if !strings.HasPrefix(msg, "400 InvalidInput") {
			t.Errorf("a malformed filter shows %q", msg)
		}
	})

	t.Run("edit an entity", func(t *testing.T) {
		c.t = t
		setValue("#filter", "PartitionKey eq 'p1'")
		click("#apply-filter")
		c.waitFor(`document.getElementById('page-info').textContent === 'page 1, 2 entities'`)
		c.eval(`[...document.querySelectorAll('#entities tbody tr')].find((tr) => tr.cells[1].textContent.startsWith('alice')).click()`, nil)
		c.waitFor(`!document.getElementById('entity-view').hidden && document.getElementById('entity-title').textContent === 'p1 / alice'`)
		c.eval(`(() => {
			for (const tr of document.querySelectorAll('#properties tbody tr')) {
				const name = tr.querySelector('.name').value;
				if (name === 'Age') tr.querySelector('.value').value = '35';
				if (name === 'Name') tr.querySelector('.value').value = 'Alice B';
			}
		})()`, nil)
		shot("databrowser-entity.png")
		click("#save-entity")
		status("saved p1 / alice")
		resp, err := people.GetEntity(ctx, "p1", "alice", nil)
		if err != nil {
			t.Fatal(err)
		}
		var e aztables.EDMEntity
		if err := json.Unmarshal(resp.Value, &e); err != nil {
			t.Fatal(err)
		}
		p := e.Properties
		if p["Age"] != int32(35) || p["Name"] != "Alice B" || p["Score"] != 9.5 || p["Big"] != aztables.EDMInt64(9007199254740993) ||
			p["Active"] != true || p["Id"] != aztables.EDMGUID("3c9d3ab2-0f5e-4c4e-9a43-1b2a0c5d7e11") || string(p["Photo"].(aztables.EDMBinary)) != "\x00\x01\x02\x03" {
			t.Errorf("saved entity %#v", p)
		}
		if born, ok := p["Born"].(aztables.EDMDateTime); !ok || !time.Time(born).Equal(time.Date(1990, 4, 1, 8, 30, 0, 123456700, time.UTC)) {
			t.Errorf("saved Born %#v", p["Born"])
		}
	})

	t.Run("delete an entity", func(t *testing.T) {
		c.t = t
		c.eval(`window.confirm = () => true`, nil)
		c.eval(`[...document.querySelectorAll('#entities tbody tr')].find((tr) => tr.cells[1].textContent.startsWith('bob')).click()`, nil)
		c.waitFor(`document.getElementById('entity-title').textContent === 'p1 / bob'`)
		click("#delete-entity")
		status("deleted p1 / bob")
		var re *azcore.ResponseError
		if _, err := people.GetEntity(ctx, "p1", "bob", nil); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
			t.Errorf("bob after delete: %v", err)
		}
	})

	t.Run("create a table, insert, delete the table", func(t *testing.T) {
		c.t = t
		setValue("#new-table", "fromBrowser")
		click("#create-table")
		status("created table fromBrowser")
		c.waitFor(`document.querySelectorAll('#tables li').length === 3`)
		clickTable("fromBrowser")
		c.waitFor(`document.getElementById('page-info').textContent === 'page 1, 0 entities'`)
		click("#new-entity")
		c.eval(`(() => {
			const rows = document.querySelectorAll('#properties tbody tr');
			rows[0].querySelector('.value').value = 'pk';
			rows[1].querySelector('.value').value = "it's";
			document.getElementById('add-property').click();
			const added = [...document.querySelectorAll('#properties tbody tr')].at(-1);
			added.querySelector('.name').value = 'Count';
			added.querySelector('select').value = 'Edm.Int64';
			added.querySelector('.value').value = '12345678901';
		})()`, nil)
		click("#save-entity")
		status("inserted pk / it's")
		resp, err := svc.NewClient("fromBrowser").GetEntity(ctx, "pk", "it's", nil)
		if err != nil {
			t.Fatal(err)
		}
		var e aztables.EDMEntity
		if err := json.Unmarshal(resp.Value, &e); err != nil {
			t.Fatal(err)
		}
		if e.Properties["Count"] != aztables.EDMInt64(12345678901) {
			t.Errorf("inserted %#v", e.Properties)
		}
		click("#delete-table")
		status("deleted table fromBrowser")
		c.waitFor(`document.querySelectorAll('#tables li').length === 2`)
		var re *azcore.ResponseError
		if _, err := svc.NewClient("fromBrowser").GetEntity(ctx, "pk", "it's", nil); !errors.As(err, &re) || re.StatusCode != http.StatusNotFound {
			t.Errorf("the deleted table still answers: %v", err)
		}
	})

	t.Run("without a SAS nothing is shown", func(t *testing.T) {
		c.t = t
		c.eval(`sessionStorage.clear()`, nil)
		c.navigate(base + "/_browser/")
		status("no account")
		// A made-up token is refused by the API, and the page says so.
		setValue("#new-account-name", "devstoreaccount1")
		setValue("#new-account-sas", "sv=2019-02-02&ss=t&srt=sco&sp=rl&se=2099-01-01T00:00:00Z&sig=AAAA")
		click("#add-account-btn")
		c.waitFor(`document.getElementById('status').textContent.startsWith('403')`)
		var msg string
		c.eval(`document.getElementById('status').textContent`, &msg)
		if !strings.HasPrefix(msg, "403 AuthenticationFailed") {
			t.Errorf("a forged SAS shows %q", msg)
		}
	})
}
