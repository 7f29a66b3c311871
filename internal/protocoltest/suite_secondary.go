package protocoltest

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// suiteSecondary covers the secondary location of every account: Azure
// serves a read-access geo-redundant account's replica at
// <account>-secondary (host-style), the storage emulator at
// /devstoreaccount1-secondary (path-style, "Use the Azurite emulator",
// TableSecondaryEndpoint). It is a read-only view of the account: reads and
// Get Table Service Stats (geo-replication "live") work, writes are 403
// InsufficientAccountPermissions ("Write operations are not allowed"), and
// Get Table Service Stats on the primary is 400 InvalidQueryParameterValue
// ("Get Table Service Stats": only on the secondary location endpoint).
// Clients sign as the primary account ("Authorize with Shared Key").
func suiteSecondary(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	c := newTable(t, sc, "")
	table := TableName(t, "")
	etag := addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","Name":"primary"}`).ETag
	dev := srv.Account(t, auth.DevStoreAccountName)
	sec := srv.ClientFrom(t, srv.secondaryConnectionString(t, dev.Name))
	secTable := sec.NewClient(table)

	t.Run("ReadsThroughTheSDK", func(t *testing.T) {
		found := false
		p := sec.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName eq '" + table + "'")})
		for p.More() {
			page, err := p.NextPage(ctxFor(t))
			if err != nil {
				t.Fatalf("secondary Query Tables: %v", err)
			}
			found = found || len(page.Tables) == 1
		}
		if !found {
			t.Error("secondary Query Tables does not list the table")
		}
		e, gotETag := getEDM(t, secTable, "p", "r")
		if e.Properties["Name"] != "primary" || gotETag != etag {
			t.Errorf("secondary Get Entity: %v %s, want the primary's entity and ETag %s", e.Properties, gotETag, etag)
		}
		entities, _ := listAll(t, secTable, &aztables.ListEntitiesOptions{Filter: to.Ptr("PartitionKey eq 'p'")})
		if got := strings.Join(keysOf(t, entities), " "); got != "p/r" {
			t.Errorf("secondary Query Entities: %q", got)
		}
		if _, err := secTable.GetAccessPolicy(ctxFor(t), nil); err != nil {
			t.Errorf("secondary Get Table ACL: %v", err)
		}
		if _, err := sec.GetProperties(ctxFor(t), nil); err != nil {
			t.Errorf("secondary Get Table Service Properties: %v", err)
		}
	})

	t.Run("Stats", func(t *testing.T) {
		before := time.Now().Add(-time.Minute)
		stats, err := sec.GetStatistics(ctxFor(t), nil)
		if err != nil {
			t.Fatalf("secondary GetStatistics: %v", err)
		}
		if g := stats.GeoReplication; g == nil || g.Status == nil || *g.Status != aztables.GeoReplicationStatusLive ||
			g.LastSyncTime == nil || g.LastSyncTime.Before(before) {
			t.Errorf("GeoReplication %s, want live and synced now", toString(g))
		}
		_, err = sc.GetStatistics(ctxFor(t), nil)
		wantError(t, err, http.StatusBadRequest, "InvalidQueryParameterValue")
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/", RawQuery: "restype=service&comp=stats"})
		wantXMLError(t, resp, http.StatusBadRequest, "InvalidQueryParameterValue")
		// Raw, with SharedKey as the Python SDK signs.
		resp = srv.Do(t, Request{Method: http.MethodGet, Path: "/", RawQuery: "restype=service&comp=stats", Secondary: true, Signing: SharedKey})
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(resp.Body), "<Status>live</Status>") {
			t.Errorf("raw secondary stats: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		commonHeaders(t, resp)
		// Stats are read-only: PUT is not an operation of the service.
		put := srv.Do(t, Request{Method: http.MethodPut, RawQuery: "restype=service&comp=stats", Path: "/", Body: []byte("<x/>"),
			Header: http.Header{"Content-Type": {"application/xml"}}})
		if put.StatusCode < 400 || put.StatusCode >= 500 {
			t.Errorf("PUT stats: %d %s, want a 4xx", put.StatusCode, truncate(put.Body))
		}
	})

	t.Run("WritesRefused", func(t *testing.T) {
		before := snapshot(t, c)
		_, err := sec.CreateTable(ctxFor(t), TableName(t, "new"), nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = secTable.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"new"}`), nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = secTable.UpsertEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"r","Name":"secondary"}`), nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = secTable.DeleteEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = secTable.SubmitTransaction(ctxFor(t), []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: []byte(`{"PartitionKey":"p","RowKey":"batch"}`)}}, nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = secTable.SetAccessPolicy(ctxFor(t), nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = sec.SetProperties(ctxFor(t), aztables.ServiceProperties{}, nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		_, err = sec.DeleteTable(ctxFor(t), table, nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		resp := srv.Do(t, Request{Method: http.MethodPost, Path: entityPath(table, "p", "r"), Secondary: true,
			Body: []byte(`{"Name":"merged"}`), Header: http.Header{"X-HTTP-Method": {"MERGE"}, "If-Match": {"*"}}})
		wantRawError(t, resp, http.StatusForbidden, "InsufficientAccountPermissions")
		unchanged(t, c, before)
		if _, err := sc.NewClient(TableName(t, "new")).GetAccessPolicy(ctxFor(t), nil); err == nil {
			t.Error("the refused Create Table created the table")
		}
	})

	// The Python SDK sends Get Table Service Stats of a path-style endpoint
	// to /<account>-secondary/<account>/, signed over the primary's path.
	t.Run("PythonSDKForm", func(t *testing.T) {
		for _, tc := range []struct{ path, query, want string }{
			{"/", "restype=service&comp=stats", "<Status>live</Status>"},
			{"/" + table + "()", "", `"RowKey":"r"`},
		} {
			req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodGet, Path: tc.path, RawQuery: tc.query, Signing: SharedKey})
			moveToSecondary(req, dev.Name)
			resp := srv.Send(t, req)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(resp.Body), tc.want) {
				t.Errorf("%s: %d %s", req.URL.Path, resp.StatusCode, truncate(resp.Body))
			}
		}
		// A write in that form is still a write on the secondary.
		req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodDelete, Path: entityPath(table, "p", "r"),
			Header: http.Header{"If-Match": {"*"}}, Signing: SharedKey})
		moveToSecondary(req, dev.Name)
		wantRawError(t, srv.Send(t, req), http.StatusForbidden, "InsufficientAccountPermissions")
	})

	t.Run("HostStyle", func(t *testing.T) {
		for _, tc := range []struct {
			host   string
			method string
			status int
		}{
			{dev.Name + "-secondary.table.core.windows.net", http.MethodGet, http.StatusOK},
			{dev.Name + "-secondary.localhost", http.MethodGet, http.StatusOK},
			{dev.Name + "-secondary.table.core.windows.net", http.MethodDelete, http.StatusForbidden},
			{"nosuchaccount-secondary.table.core.windows.net", http.MethodGet, http.StatusBadRequest},
		} {
			req, err := http.NewRequest(tc.method, srv.URL+entityPath(table, "p", "r"), nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			req.Header.Set("x-ms-version", DefaultVersion)
			req.Header.Set("Accept", "application/json;odata=minimalmetadata")
			req.Header.Set("If-Match", "*")
			req.Header.Set("x-ms-date", time.Now().UTC().Format(http.TimeFormat))
			if err := auth.SignSharedKeyLite(req, dev.Name, dev.Keys[0]); err != nil {
				t.Fatal(err)
			}
			resp := srv.Send(t, req)
			if resp.StatusCode != tc.status {
				t.Errorf("%s %s: %d %s, want %d", tc.method, tc.host, resp.StatusCode, truncate(resp.Body), tc.status)
			}
			if tc.status == http.StatusOK && !strings.Contains(string(resp.Body), "http://"+tc.host+"/$metadata") {
				t.Errorf("%s: odata.metadata does not name the secondary host: %s", tc.host, truncate(resp.Body))
			}
		}
	})

	// Every account has its secondary, signed with that account's own key.
	t.Run("EveryAccount", func(t *testing.T) {
		other := auth.Account{Name: "otheracct", Keys: [][]byte{randomKey(t)}}
		srv2 := New(t, tablebridgetest.WithStore(srv.Store), tablebridgetest.WithAccounts(other))
		osc := srv2.ClientFrom(t, srv2.accountConnectionString(t, other.Name, 0))
		otherTable := TableName(t, "")
		if _, err := osc.CreateTable(ctxFor(t), otherTable, nil); err != nil {
			t.Fatal(err)
		}
		addEntity(t, osc.NewClient(otherTable), `{"PartitionKey":"p","RowKey":"other"}`)
		osec := srv2.ClientFrom(t, srv2.secondaryConnectionString(t, other.Name))
		if _, err := osec.NewClient(otherTable).GetEntity(ctxFor(t), "p", "other", nil); err != nil {
			t.Errorf("otheracct-secondary Get Entity: %v", err)
		}
		if _, err := osec.GetStatistics(ctxFor(t), nil); err != nil {
			t.Errorf("otheracct-secondary GetStatistics: %v", err)
		}
		_, err := osec.NewClient(otherTable).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"sec"}`), nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
		// devstoreaccount1's key does not open another account's secondary.
		resp := srv2.Do(t, Request{Method: http.MethodGet, Path: "/Tables", Account: other.Name, Secondary: true, Key: dev.Keys[0]})
		wantRawError(t, resp, http.StatusForbidden, "AuthenticationFailed")
	})

	t.Run("TableSAS", func(t *testing.T) {
		// A SAS the primary signed reads on the secondary too.
		cred, err := aztables.NewSharedKeyCredential(auth.DevStoreAccountName, auth.DevStoreAccountKey)
		if err != nil {
			t.Fatal(err)
		}
		sas, err := aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP, StartTime: time.Now().Add(-time.Hour),
			ExpiryTime: time.Now().Add(time.Hour), Permissions: to.Ptr(aztables.SASPermissions{Read: true, Add: true}).String(), TableName: table,
		}.Sign(cred)
		if err != nil {
			t.Fatal(err)
		}
		client := srv.sasURLClient(t, srv.AccountURL(dev.Name+"-secondary")+"/"+table+"?"+sas)
		if _, err := client.GetEntity(ctxFor(t), "p", "r", nil); err != nil {
			t.Errorf("SAS read on the secondary: %v", err)
		}
		_, err = client.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"sas"}`), nil)
		wantError(t, err, http.StatusForbidden, "InsufficientAccountPermissions")
	})
}

// moveToSecondary does what the Python SDK does to a signed request for the
// secondary location of a path-style endpoint: /<account>-secondary goes in
// front of the path, after signing.
func moveToSecondary(req *http.Request, account string) {
	escaped := req.URL.EscapedPath()
	req.URL.Path = "/" + account + "-secondary" + req.URL.Path
	req.URL.RawPath = "/" + account + "-secondary" + escaped
}
