package lambdafn_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

// TestLoneGETBatchOnLambda: a batch that is one GET, a point read or a
// query ("Performing entity group transactions": a query must be submitted
// singly in its batch), is served by the function that receives $batch,
// whose store guard and IAM follow EntityGroupTransaction's entry.
func TestLoneGETBatchOnLambda(t *testing.T) {
	t.Parallel()
	fs := newFunctions(t, openBolt(t))
	do := func(method, path, contentType, body string) (int, string, http.Header) {
		t.Helper()
		h := map[string]string{"Content-Type": contentType}
		resp := fs.do(t, newRequest(t, req{method: method, path: path, header: h, body: body}), stageOpts())
		return resp.StatusCode, readAll(t, resp), resp.Header
	}
	if code, body, _ := do(http.MethodPost, "/Tables", "application/json", `{"TableName":"lone"}`); code != http.StatusNoContent && code != http.StatusCreated {
		t.Fatalf("create table: %d %s", code, body)
	}
	if code, body, _ := do(http.MethodPost, "/lone", "application/json", `{"PartitionKey":"p","RowKey":"r","V":1}`); code != http.StatusNoContent && code != http.StatusCreated {
		t.Fatalf("insert: %d %s", code, body)
	}
	for _, path := range []string{"/lone(PartitionKey='p',RowKey='r')", "/lone()?$filter=" + url.QueryEscape("PartitionKey eq 'p'")} {
		const boundary = "batch_lone"
		body := fmt.Sprintf("--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"+
			"GET https://%s/%s/%s%s HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\nDataServiceVersion: 3.0\r\n\r\n\r\n--%s--\r\n",
			boundary, apiHost, stage, devAccount, path, boundary)
		code, answer, header := do(http.MethodPost, "/$batch", "multipart/mixed; boundary="+boundary, body)
		if code != http.StatusAccepted {
			t.Fatalf("%s: batch answered %d %s", path, code, answer)
		}
		parts, err := protocoltest.ReadBatchParts(header.Get("Content-Type"), []byte(answer))
		if err != nil || len(parts) != 1 || parts[0].StatusCode != http.StatusOK || !strings.Contains(string(parts[0].Body), `"V":1`) {
			t.Errorf("%s: parts %+v, %v; want one 200 with the entity", path, parts, err)
		}
	}
}
