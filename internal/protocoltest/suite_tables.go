package protocoltest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// suiteTables covers Create Table, Delete Table and Query Tables
// ("Understanding the Table service data model", "Table names").
func suiteTables(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()

	t.Run("CreateReturns201WithTheTable", func(t *testing.T) {
		name := TableName(t, "")
		resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/Tables", Body: mustJSON(t, map[string]string{"TableName": name})})
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("got %d %s, want 201", resp.StatusCode, truncate(resp.Body))
		}
		commonHeaders(t, resp)
		body := decodeJSON(t, resp.Body)
		if body["TableName"] != name {
			t.Errorf("TableName %v, want %s", body["TableName"], name)
		}
		if got, want := body["odata.metadata"], srv.AccountURL("devstoreaccount1")+"/$metadata#Tables/@Element"; got != want {
			t.Errorf("odata.metadata %v, want %s", got, want)
		}
		// The SDK sees the table.
		if _, err := sc.NewClient(name).AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"r"}`), nil); err != nil {
			t.Errorf("insert into the new table: %v", err)
		}
	})

	t.Run("CreateTwiceIsTableAlreadyExists", func(t *testing.T) {
		name := TableName(t, "")
		if _, err := sc.CreateTable(ctxFor(t), name, nil); err != nil {
			t.Fatal(err)
		}
		addEntity(t, sc.NewClient(name), `{"PartitionKey":"p","RowKey":"r","V":1}`)
		before := snapshot(t, sc.NewClient(name))
		_, err := sc.CreateTable(ctxFor(t), name, nil)
		wantError(t, err, http.StatusConflict, "TableAlreadyExists")
		unchanged(t, sc.NewClient(name), before)
	})

	t.Run("NamesAreCaseInsensitiveAndKeepTheirCase", func(t *testing.T) {
		name := "My" + TableName(t, "")
		if _, err := sc.CreateTable(ctxFor(t), name, nil); err != nil {
			t.Fatal(err)
		}
		_, err := sc.CreateTable(ctxFor(t), strings.ToLower(name), nil)
		wantError(t, err, http.StatusConflict, "TableAlreadyExists")
		_, err = sc.CreateTable(ctxFor(t), strings.ToUpper(name), nil)
		wantError(t, err, http.StatusConflict, "TableAlreadyExists")

		// Any case addresses the table.
		addEntity(t, sc.NewClient(strings.ToLower(name)), `{"PartitionKey":"p","RowKey":"r"}`)
		if _, err := sc.NewClient(strings.ToUpper(name)).GetEntity(ctxFor(t), "p", "r", nil); err != nil {
			t.Errorf("get through the upper-case name: %v", err)
		}
		// Listing shows the case it was created with.
		filter := fmt.Sprintf("TableName eq '%s'", name)
		got := listTables(t, sc, &aztables.ListTablesOptions{Filter: &filter})
		if !slices.Equal(got, []string{name}) {
			t.Errorf("listed %q, want [%s]", got, name)
		}
		// And any case deletes it.
		if _, err := sc.DeleteTable(ctxFor(t), strings.ToLower(name), nil); err != nil {
			t.Errorf("delete through the lower-case name: %v", err)
		}
		if got := listTables(t, sc, &aztables.ListTablesOptions{Filter: &filter}); len(got) != 0 {
			t.Errorf("after delete, listed %q", got)
		}
	})

	t.Run("InvalidNames", func(t *testing.T) {
		for _, tc := range []struct{ name, table string }{
			{"TooShort", "ab"},
			{"TooLong", "a" + strings.Repeat("b", 63)},
			{"LeadingDigit", "1abc"},
			{"Hyphen", "ab-cd"},
			{"Underscore", "ab_cd"},
			{"Space", "ab cd"},
			{"NonASCII", "tablé"},
			{"ReservedTables", "tables"},
			{"ReservedTablesAnyCase", "Tables"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := sc.CreateTable(ctxFor(t), tc.table, nil)
				wantError(t, err, http.StatusBadRequest, "InvalidResourceName")
			})
		}
		// The limits themselves are legal.
		for _, table := range []string{"abc", "a" + strings.Repeat("B", 62)} {
			if _, err := sc.CreateTable(ctxFor(t), table, nil); err != nil {
				t.Errorf("create %q (%d chars): %v", table, len(table), err)
			}
		}
	})

	t.Run("DeleteReturns204AndDropsEntities", func(t *testing.T) {
		c := newTable(t, sc, "")
		name := TableName(t, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r"}`)
		resp := srv.Do(t, Request{Method: http.MethodDelete, Path: "/Tables('" + name + "')"})
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: got %d %s, want 204", resp.StatusCode, truncate(resp.Body))
		}
		commonHeaders(t, resp)
		_, err := c.GetEntity(ctxFor(t), "p", "r", nil)
		wantError(t, err, http.StatusNotFound, "TableNotFound")
		_, err = c.AddEntity(ctxFor(t), []byte(`{"PartitionKey":"p","RowKey":"r2"}`), nil)
		wantError(t, err, http.StatusNotFound, "TableNotFound")

		// A table created again under the name starts empty. Azure answers
		// 409 TableBeingDeleted for a while after a delete (about 40 s),
		// as the DynamoDB store does for 2 s.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			_, err := sc.CreateTable(ctxFor(t), name, nil)
			var re *azcore.ResponseError
			if errors.As(err, &re) && re.ErrorCode == "TableBeingDeleted" && time.Now().Before(deadline) {
				continue
			}
			if err != nil {
				t.Fatalf("create again: %v", err)
			}
			break
		}
		if got, _ := listAll(t, c, nil); len(got) != 0 {
			t.Errorf("recreated table holds %d entities, want 0", len(got))
		}
	})

	t.Run("DeleteMissingIsResourceNotFound", func(t *testing.T) {
		// DELETE Tables('missing') is 404 ResourceNotFound on Azure
		// (azure-cosmos-table-python azure-cosmosdb-table/tests/recordings/test_table.test_delete_table_with_non_existing_table_fail_not_exist.yaml).
		_, err := sc.DeleteTable(ctxFor(t), TableName(t, ""), nil)
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
		// The SDK's Client.Delete takes the same path.
		_, err = sc.NewClient(TableName(t, "other")).Delete(ctxFor(t), nil)
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	})

	t.Run("ListWithFilter", func(t *testing.T) {
		// The name's hash alone: unique to this test, and no other table
		// of the account starts with it.
		name := TableName(t, "")
		prefix := "L" + name[len(name)-12:]
		names := []string{prefix + "Alpha", prefix + "Beta", prefix + "Gamma", prefix + "Delta"}
		for _, n := range names {
			if _, err := sc.CreateTable(ctxFor(t), n, nil); err != nil {
				t.Fatal(err)
			}
		}
		// An upper bound just past the prefix: the prefix's last
		// character plus one.
		upper := prefix[:len(prefix)-1] + string(prefix[len(prefix)-1]+1)
		for _, tc := range []struct {
			name, filter string
			want         []string
		}{
			{"Eq", fmt.Sprintf("TableName eq '%sBeta'", prefix), []string{prefix + "Beta"}},
			{"PrefixRange", fmt.Sprintf("TableName ge '%s' and TableName lt '%s'", prefix, upper), []string{prefix + "Alpha", prefix + "Beta", prefix + "Delta", prefix + "Gamma"}},
			{"PrefixRangeMinusOne", fmt.Sprintf("TableName ge '%s' and TableName lt '%s' and TableName ne '%sDelta'", prefix, upper, prefix), []string{prefix + "Alpha", prefix + "Beta", prefix + "Gamma"}},
			{"Gt", fmt.Sprintf("TableName gt '%sDelta' and TableName lt '%s'", prefix, upper), []string{prefix + "Gamma"}},
			{"Or", fmt.Sprintf("TableName eq '%sAlpha' or TableName eq '%sGamma'", prefix, prefix), []string{prefix + "Alpha", prefix + "Gamma"}},
			{"NoMatch", fmt.Sprintf("TableName eq '%sZeta'", prefix), nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := listTables(t, sc, &aztables.ListTablesOptions{Filter: &tc.filter})
				if !slices.Equal(got, tc.want) {
					t.Errorf("$filter=%s listed %q, want %q", tc.filter, got, tc.want)
				}
			})
		}
		t.Run("MalformedFilter", func(t *testing.T) {
			filter := "TableName eq"
			_, err := sc.NewListTablesPager(&aztables.ListTablesOptions{Filter: &filter}).NextPage(ctxFor(t))
			wantError(t, err, http.StatusBadRequest, "InvalidInput")
		})
	})

	t.Run("ListPagesWithTopAndNextTableName", func(t *testing.T) {
		// Its own server: an unfiltered listing sees every table.
		srv := newServer(t)
		sc := srv.Client()
		var want []string
		for i := range 23 {
			// Mixed case: the order is case-insensitive, the case kept.
			n := fmt.Sprintf("Pg%02dTable", i)
			if i%2 == 1 {
				n = strings.ToLower(n)
			}
			want = append(want, n)
		}
		var wg sync.WaitGroup
		errs := make(chan error, len(want))
		for _, n := range want {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := sc.CreateTable(ctxFor(t), n, nil); err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		top := int32(5)
		var got []string
		var sizes []int
		p := sc.NewListTablesPager(&aztables.ListTablesOptions{Top: &top})
		for p.More() {
			page, err := p.NextPage(ctxFor(t))
			if err != nil {
				t.Fatal(err)
			}
			sizes = append(sizes, len(page.Tables))
			for _, tb := range page.Tables {
				got = append(got, *tb.Name)
			}
			if len(sizes) > 100 {
				t.Fatal("NextTableName does not advance")
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("listed %q, want %q", got, want)
		}
		for i, n := range sizes {
			if n > int(top) {
				t.Errorf("page %d holds %d tables, more than $top=%d", i, n, top)
			}
		}
		if len(sizes) < 5 {
			t.Errorf("got %d pages (%v), want at least 5 for 23 tables at $top=5", len(sizes), sizes)
		}

		// The raw header is x-ms-continuation-NextTableName.
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables", RawQuery: "$top=2"})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-continuation-NextTableName") == "" {
			t.Errorf("GET /Tables?$top=2: %d, NextTableName %q", resp.StatusCode, resp.Header.Get("x-ms-continuation-NextTableName"))
		}
		var body struct {
			Metadata string `json:"odata.metadata"`
			Value    []struct{ TableName string }
		}
		if err := json.Unmarshal(resp.Body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body.Value) != 2 || body.Metadata != srv.AccountURL("devstoreaccount1")+"/$metadata#Tables" {
			t.Errorf("body %s: want 2 tables and odata.metadata ...#Tables", truncate(resp.Body))
		}
	})
}

// listTables pages through Query Tables and returns the names in order.
func listTables(t testing.TB, sc *aztables.ServiceClient, opts *aztables.ListTablesOptions) []string {
	t.Helper()
	var names []string
	p := sc.NewListTablesPager(opts)
	for p.More() {
		page, err := p.NextPage(ctxFor(t))
		if err != nil {
			t.Fatalf("list tables: %v", err)
		}
		for _, tb := range page.Tables {
			names = append(names, *tb.Name)
		}
	}
	return names
}
