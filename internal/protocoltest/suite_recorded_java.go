package protocoltest

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"testing"
)

// The Java SDK's recordings of the real service cited below (azure-data-tables
// 12.4, x-ms-version 2020-12-06, April 2023) are public:
// Azure/azure-sdk-for-java
// sdk/tables/azure-data-tables/src/test/resources/session-records/<name>.json.

// suiteJavaRecorded holds the answers where replaying the Java SDK's
// recordings found tablebridge answering otherwise. Each case names the
// recording that shows Azure's answer; the requests are written as the
// Java SDK wrote them.
func suiteJavaRecorded(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()
	base := srv.AccountURL("devstoreaccount1")

	// Recordings: TableAsyncClientTest.getEntityWithSingleQuotesInPartitionKey,
	// getEntityWithSingleQuotesInRowKey, listEntitiesWithSingleQuotesInPartitionKey
	// and updateEntity/deleteEntityWithSingleQuotesInPartitionKey. Azure
	// writes a key's quotes doubled and as they are, not percent-encoded,
	// wherever it writes the entity's address: Location and DataServiceId
	// of an insert, and odata.id and odata.editLink at full metadata, for
	// one entity and in a query. The Java SDK sends the quotes as they are
	// too.
	for _, keys := range []struct{ name, pk, rk, self string }{
		{"QuoteInPartitionKey", "partition'key604293", "rowkey467287fc5", "(PartitionKey='partition''key604293',RowKey='rowkey467287fc5')"},
		{"QuoteInRowKey", "partitionkey93718", "row'key36524d8a", "(PartitionKey='partitionkey93718',RowKey='row''key36524d8a')"},
	} {
		t.Run(keys.name, func(t *testing.T) {
			newTable(t, sc, "")
			table := TableName(t, "")
			self := table + keys.self
			path := "/" + self
			noContent := http.Header{"Prefer": {"return-no-content"}, "Content-Type": {"application/json;odata=nometadata"}}
			resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/" + table, Header: noContent,
				Body: mustJSON(t, map[string]string{"PartitionKey": keys.pk, "RowKey": keys.rk})})
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("insert: %d %s", resp.StatusCode, truncate(resp.Body))
			}
			if loc, id := resp.Header.Get("Location"), resp.Header.Get("DataServiceId"); loc != base+path || id != base+path {
				t.Errorf("Location %q and DataServiceId %q, want %s", loc, id, base+path)
			}
			etag := resp.Header.Get("ETag")

			full := "$format=" + url.QueryEscape("application/json;odata=fullmetadata")
			resp = srv.Do(t, Request{Method: http.MethodGet, Path: path, RawQuery: full})
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, resp.StatusCode, truncate(resp.Body))
			}
			got := decodeJSON(t, resp.Body)
			if got["odata.id"] != base+path || got["odata.editLink"] != self || got["PartitionKey"] != keys.pk || got["RowKey"] != keys.rk {
				t.Errorf("GET at full metadata: odata.id %v, odata.editLink %v, keys %v/%v; want %s, %s, %s/%s",
					got["odata.id"], got["odata.editLink"], got["PartitionKey"], got["RowKey"], base+path, self, keys.pk, keys.rk)
			}
			// The other levels carry no address at all.
			for _, level := range []string{"minimalmetadata", "nometadata"} {
				got := decodeJSON(t, srv.Do(t, Request{Method: http.MethodGet, Path: path,
					RawQuery: "$format=" + url.QueryEscape("application/json;odata="+level)}).Body)
				if _, ok := got["odata.id"]; ok {
					t.Errorf("%s: odata.id %v", level, got["odata.id"])
				}
				if _, ok := got["odata.editLink"]; ok {
					t.Errorf("%s: odata.editLink %v", level, got["odata.editLink"])
				}
			}
			resp = srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: full})
			list, _ := decodeJSON(t, resp.Body)["value"].([]any)
			if len(list) != 1 {
				t.Fatalf("query: %d %s", resp.StatusCode, truncate(resp.Body))
			}
			if e := list[0].(map[string]any); e["odata.id"] != base+path || e["odata.editLink"] != self {
				t.Errorf("query at full metadata: odata.id %v, odata.editLink %v, want %s and %s", e["odata.id"], e["odata.editLink"], base+path, self)
			}

			// The ETag of the insert still names the entity's version, and
			// merge and delete by the Java SDK's spelling reach it.
			resp = srv.Do(t, Request{Method: "MERGE", Path: path, Body: []byte(`{"Test":"MergedValue"}`), Header: http.Header{"If-Match": {etag}}})
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("merge with the insert's ETag: %d %s", resp.StatusCode, truncate(resp.Body))
			}
			resp = srv.Do(t, Request{Method: http.MethodDelete, Path: path, Header: http.Header{"If-Match": {"*"}}})
			if resp.StatusCode != http.StatusNoContent {
				t.Fatalf("delete: %d %s", resp.StatusCode, truncate(resp.Body))
			}
		})
	}

	// Recording: TableAsyncClientTest.submitTransactionAllActionsForEntitiesWithSingleQuotesInPartitionKey:
	// an insert in a changeset answers Location and DataServiceId with the
	// quotes as they are; answered with content, so is the entity's
	// odata.id.
	t.Run("QuoteInBatchAnswers", func(t *testing.T) {
		newTable(t, sc, "")
		table := TableName(t, "")
		const pk = "partition'key01025c"
		self := func(rk string) string { return table + "(PartitionKey='partition''key01025c',RowKey='" + rk + "')" }
		full := "?$format=" + url.QueryEscape("application/json;odata=fullmetadata")
		resp := srv.doBatch(t, []batchOp{
			{Method: http.MethodPost, Path: "/" + table, Header: http.Header{"Prefer": {"return-no-content"}},
				Body: mustJSON(t, map[string]string{"PartitionKey": pk, "RowKey": "rowkey774362d94"})},
			{Method: http.MethodPost, Path: "/" + table + full,
				Body: mustJSON(t, map[string]string{"PartitionKey": pk, "RowKey": "rowkey91869676b"})},
		})
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("batch: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		parts := parseBatchResponse(t, resp.Header.Get("Content-Type"), resp.Body)
		if len(parts) != 2 {
			t.Fatalf("%d parts: %s", len(parts), truncate(resp.Body))
		}
		first, second := base+"/"+self("rowkey774362d94"), base+"/"+self("rowkey91869676b")
		if loc, id := parts[0].Header.Get("Location"), parts[0].Header.Get("DataServiceId"); loc != first || id != first {
			t.Errorf("204 part: Location %q, DataServiceId %q, want %s", loc, id, first)
		}
		if loc := parts[1].Header.Get("Location"); loc != second {
			t.Errorf("201 part: Location %q, want %s", loc, second)
		}
		if got := decodeJSON(t, parts[1].Body); got["odata.id"] != base+"/"+self("rowkey91869676b") || got["odata.editLink"] != self("rowkey91869676b") {
			t.Errorf("inserted entity: odata.id %v, odata.editLink %v", got["odata.id"], got["odata.editLink"])
		}
	})

	// Continuation tokens carry keys in their own encoding, which the way
	// addresses are written leaves alone: the tokens of keys with quotes
	// are spelled as before, and one written by hand as earlier versions
	// wrote it still resumes the query after that entity.
	t.Run("QuoteKeysContinuation", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		for _, rk := range []string{"a'1", "b'2", "c'3"} {
			addEntity(t, c, map[string]string{"PartitionKey": "p'k", "RowKey": rk})
		}
		token := func(key string) string {
			enc := base64.RawURLEncoding.EncodeToString([]byte(key))
			return "1!" + strconv.Itoa(len(enc)) + "!" + enc
		}
		page := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: "$top=1"})
		npk, nrk := page.Header.Get("x-ms-continuation-NextPartitionKey"), page.Header.Get("x-ms-continuation-NextRowKey")
		if npk != token("p'k") || nrk != token("a'1") {
			t.Fatalf("first page's continuation %q/%q, want %q/%q", npk, nrk, token("p'k"), token("a'1"))
		}
		q := url.Values{"NextPartitionKey": {token("p'k")}, "NextRowKey": {token("a'1")}, "$top": {"1"}}
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: q.Encode()})
		list, _ := decodeJSON(t, resp.Body)["value"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["RowKey"] != "b'2" {
			t.Fatalf("resumed query: %d %s", resp.StatusCode, truncate(resp.Body))
		}
	})
}
