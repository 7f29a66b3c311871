package lambdafn_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// TestAzureRecordedOnLambda runs, through the Lambda functions, the answers
// where replaying Azure's recorded traffic found tablebridge answering
// otherwise (docs/compatibility.md, "Answers checked against Azure's
// recorded traffic"). internal/protocoltest's AzureRecorded group covers
// each in depth on both stores and names its recording; here each request
// reaches its function and gets Azure's answer:
//   - an origin-form batch without Host, as the legacy Python SDK sends
//     (azure-cosmos-table-python azure-cosmosdb-table/tests/recordings/test_table_batch.test_batch_insert.yaml);
//   - DateTime values in the shortest form (the same recording);
//   - Preference-Applied on a 409 (test_table.test_create_table_with_already_existing_table_fail_on_exist.yaml);
//   - ResourceNotFound in the Accept's media type for a missing table by
//     name (test_table.test_table_not_exists.yaml);
//   - the $select projection in odata.metadata
//     (test_table_entity.test_get_entity_with_select.yaml);
//   - an empty changeset;
//   - Create Table's 201 without DataServiceId (azure-sdk-for-net
//     sdk/tables/Azure.Data.Tables/tests/SessionRecords/TableServiceClientLiveTests/GetTablesReturnsTablesWithFilter.json);
//   - a key's quotes doubled and unescaped in odata.editLink (azure-sdk-for-java
//     sdk/tables/azure-data-tables/src/test/resources/session-records/TableAsyncClientTest.getEntityWithSingleQuotesInPartitionKey.json;
//     internal/protocoltest's JavaRecorded group).
func TestAzureRecordedOnLambda(t *testing.T) {
	fs := newFunctions(t, openBolt(t))
	createTable(t, fs, "recorded")
	minimal := map[string]string{"Accept": "application/json;odata=minimalmetadata"}

	const batchB, changeB = "batch_f673eb67", "changeset_f673eb68"
	originBatch := "--" + batchB + "\nContent-Type: multipart/mixed; boundary=" + changeB + "\n\n--" + changeB +
		"\nContent-Type: application/http\nContent-Transfer-Encoding: binary\n\nPOST /recorded HTTP/1.1\nContent-ID: 1\n" +
		"Content-Type: application/json\nAccept: application/json;odata=minimalmetadata\nPrefer: return-no-content\n\n" +
		`{"PartitionKey": "001", "RowKey": "batch_insert", "test5": "2017-11-10T02:43:41Z", "test5@odata.type": "Edm.DateTime"}` +
		"\n\n--" + changeB + "--\n--" + batchB + "--"
	emptyBatch := "--" + batchB + "\r\nContent-Type: multipart/mixed; boundary=" + changeB + "\r\n\r\n--" + changeB + "--\r\n--" + batchB + "--\r\n"
	batchHeader := map[string]string{"Content-Type": "multipart/mixed; boundary=" + batchB}

	for _, tc := range []struct {
		name     string
		r        req
		status   int
		code     string
		header   string // name: value the answer must carry
		noHeader string // a header the answer must not carry
		contains string
	}{
		{"OriginFormBatch", req{method: http.MethodPost, path: "/$batch", body: originBatch, header: batchHeader, sign: auth.SignSharedKey},
			http.StatusAccepted, "", "", "", "HTTP/1.1 204 No Content"},
		{"DateTimeShortestForm", req{method: http.MethodGet, path: "/recorded(PartitionKey='001',RowKey='batch_insert')"},
			http.StatusOK, "", "", "", `"test5":"2017-11-10T02:43:41Z"`},
		{"PreferenceAppliedOnError", req{method: http.MethodPost, path: "/Tables", body: `{"TableName":"recorded"}`,
			header: map[string]string{"Content-Type": "application/json", "Prefer": "return-no-content"}},
			http.StatusConflict, "TableAlreadyExists", "Preference-Applied: return-no-content", "", ""},
		{"MissingTableByName", req{method: http.MethodGet, path: "/Tables('missing')"},
			http.StatusNotFound, "ResourceNotFound", "Content-Type: application/json;odata=nometadata;streaming=true;charset=utf-8", "", ""},
		{"DeleteMissingTable", req{method: http.MethodDelete, path: "/Tables('missing')"},
			http.StatusNotFound, "ResourceNotFound", "", "", ""},
		{"MetadataWithSelect", req{method: http.MethodGet, path: "/recorded(PartitionKey='001',RowKey='batch_insert')",
			query: url.Values{"$select": {"test5,xyz"}}, header: minimal},
			http.StatusOK, "", "", "", `/$metadata#recorded/@Element&$select=test5,xyz"`},
		{"EmptyChangeset", req{method: http.MethodPost, path: "/$batch", body: emptyBatch, header: batchHeader},
			http.StatusAccepted, "", "", "", "--changesetresponse_"},
		{"CreateTableWithContent", req{method: http.MethodPost, path: "/Tables", body: `{"TableName":"recordedtwo"}`,
			header: map[string]string{"Content-Type": "application/json"}},
			http.StatusCreated, "", "", "Dataserviceid", `"TableName":"recordedtwo"`},
		{"QuoteInKey", req{method: http.MethodPost, path: "/recorded", body: `{"PartitionKey":"partition'key604293","RowKey":"r"}`,
			query: url.Values{"$format": {"application/json;odata=fullmetadata"}}, header: map[string]string{"Content-Type": "application/json"}},
			http.StatusCreated, "", "", "", `"odata.editLink":"recorded(PartitionKey='partition''key604293',RowKey='r')"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := fs.do(t, newRequest(t, tc.r), stageOpts())
			body := readAll(t, resp)
			if resp.StatusCode != tc.status || resp.Header.Get("x-ms-error-code") != tc.code || !strings.Contains(body, tc.contains) {
				t.Fatalf("got %d %q, want %d %q containing %q: %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), tc.status, tc.code, tc.contains, body)
			}
			if tc.header != "" {
				name, value, _ := strings.Cut(tc.header, ": ")
				if got := resp.Header.Get(name); got != value {
					t.Errorf("%s: %q, want %q", name, got, value)
				}
			}
			if tc.noHeader != "" && resp.Header.Get(tc.noHeader) != "" {
				t.Errorf("answer carries %s: %q", tc.noHeader, resp.Header.Get(tc.noHeader))
			}
		})
	}
}
