package batch_test

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
	"github.com/tablebridge/tablebridge/shared/model"
)

const (
	testContentType = "multipart/mixed; boundary=batch_b"
	insertRequest   = "POST http://127.0.0.1:10002/devstoreaccount1/t HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"r\"}"
	deleteRequest   = "DELETE http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nIf-Match: *\r\n\r\n"
	getRequest      = "GET http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nAccept: application/json\r\n\r\n"
)

// op is one changeset part holding request.
func op(request string) string {
	return "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" + request
}

// changesetBody is a batch with boundary batch_b holding one changeset
// with boundary changeset_c of the given parts.
func changesetBody(parts ...string) string {
	var b strings.Builder
	b.WriteString("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n")
	for _, p := range parts {
		b.WriteString("--changeset_c\r\n" + p + "\r\n")
	}
	b.WriteString("--changeset_c--\r\n\r\n--batch_b--\r\n")
	return b.String()
}

// queryBody is a batch with boundary batch_b holding one application/http
// part.
func queryBody(request string) string {
	return "--batch_b\r\n" + op(request) + "\r\n--batch_b--\r\n"
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestParseErrors walks every rejection. index -1 means the whole request
// is rejected with a plain *apierr.Error; otherwise Parse must return an
// *OperationError for that operation.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	tooMany := repeat(op(insertRequest), model.MaxBatchOperations+1)
	tooManyWithGarbage := append([]string{}, tooMany...)
	tooManyWithGarbage[50] = "garbage"
	tests := []struct {
		name        string
		contentType string
		body        string
		wantCode    apierr.Code
		wantStatus  int
		wantIndex   int
		wantCID     string
		wantMessage string
	}{
		{name: "body over 4 MiB", body: changesetBody(op(insertRequest)) + strings.Repeat(" ", batch.MaxBodyBytes), wantCode: apierr.RequestBodyTooLarge, wantStatus: http.StatusRequestEntityTooLarge, wantIndex: -1},
		{name: "body of exactly 4 MiB is read, then judged", body: strings.Repeat("x", batch.MaxBodyBytes), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "content type not multipart", contentType: "application/json", body: changesetBody(op(insertRequest)), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "content type without boundary", contentType: "multipart/mixed", body: changesetBody(op(insertRequest)), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "content type unparsable", contentType: "multipart/mixed; boundary=", body: changesetBody(op(insertRequest)), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "boundary over 70 characters", contentType: "multipart/mixed; boundary=" + strings.Repeat("b", 71), body: changesetBody(op(insertRequest)), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "empty body", body: "", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "no opening boundary", body: "--batch_other\r\n\r\n--batch_other--", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "boundary not at a line start", body: "x--batch_b\r\n\r\n", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "part never terminated", body: "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n--changeset_c\r\n", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "no parts", body: "--batch_b--\r\n", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "two changesets", body: strings.TrimSuffix(changesetBody(op(insertRequest)), "--batch_b--\r\n") + "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_d\r\n\r\n--changeset_d\r\n" + op(deleteRequest) + "\r\n--changeset_d--\r\n--batch_b--\r\n", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "changeset and a query", body: strings.TrimSuffix(changesetBody(op(insertRequest)), "--batch_b--\r\n") + "--batch_b\r\n" + op(getRequest) + "\r\n--batch_b--\r\n", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "batch part of another type", body: "--batch_b\r\nContent-Type: text/plain\r\n\r\nhello\r\n--batch_b--", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "batch part without headers", body: "--batch_b\r\n--batch_b--", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "batch part with a malformed header", body: "--batch_b\r\nno colon here\r\n\r\n--batch_b--", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "changeset without boundary", body: "--batch_b\r\nContent-Type: multipart/mixed\r\n\r\n--changeset_c--\r\n--batch_b--", wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "changeset without opening boundary", body: "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\nnothing\r\n--batch_b--", wantCode: apierr.InvalidInput, wantIndex: -1},
		{
			name: "101 operations", body: changesetBody(tooMany...), wantCode: apierr.InvalidInput, wantIndex: 0,
			wantMessage: "The batch request operation exceeds the maximum 100 changes per change set.",
		},
		{
			name: "101 operations win over a malformed one", body: changesetBody(tooManyWithGarbage...), wantCode: apierr.InvalidInput, wantIndex: 0,
			wantMessage: "The batch request operation exceeds the maximum 100 changes per change set.",
		},
		{
			name: "101 operations echo the first Content-ID", body: changesetBody(repeat("Content-Type: application/http\r\nContent-ID: 0\r\n\r\n"+insertRequest, 101)...),
			wantCode: apierr.InvalidInput, wantIndex: 0, wantCID: "0",
		},
		{name: "GET inside a changeset", body: changesetBody(op(insertRequest), op(getRequest)), wantCode: apierr.InvalidInput, wantIndex: 1},
		{name: "operation of another content type", body: changesetBody(op(insertRequest), "Content-Type: application/json\r\n\r\n{}"), wantCode: apierr.InvalidInput, wantIndex: 1},
		{name: "operation without content type", body: changesetBody("Content-Transfer-Encoding: binary\r\n\r\n" + insertRequest), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "operation in base64", body: changesetBody("Content-Type: application/http\r\nContent-Transfer-Encoding: base64\r\nContent-ID: 7\r\n\r\n" + insertRequest), wantCode: apierr.InvalidInput, wantIndex: 0, wantCID: "7"},
		{name: "operation without MIME header block", body: changesetBody(op(insertRequest), ""), wantCode: apierr.InvalidInput, wantIndex: 1},
		{name: "operation with malformed MIME header", body: changesetBody("Content-Type application/http\r\n\r\n" + insertRequest), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "operation without request line", body: changesetBody(op("\r\n\r\n")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "request line without version", body: changesetBody(op("POST http://h/a/t\r\n\r\n{}")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "request line with HTTP/2", body: changesetBody(op("POST http://h/a/t HTTP/2\r\n\r\n{}")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "request line with one field", body: changesetBody(op("POST\r\n\r\n{}")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "verb HEAD", body: changesetBody(op(insertRequest), op("HEAD http://h/a/t HTTP/1.1\r\n\r\n")), wantCode: apierr.InvalidInput, wantIndex: 1},
		{name: "lower-case verb", body: changesetBody(op("post http://h/a/t HTTP/1.1\r\n\r\n{}")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "malformed embedded header", body: changesetBody(op("POST http://h/a/t HTTP/1.1\r\nno colon\r\n\r\n{}")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "X-HTTP-Method on PUT", body: changesetBody(op("PUT http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nX-HTTP-Method: MERGE\r\n\r\n{}")), wantCode: apierr.XMethodNotUsingPost, wantIndex: 0},
		{name: "X-HTTP-Method twice", body: changesetBody(op("POST http://h/a/t HTTP/1.1\r\nX-HTTP-Method: MERGE\r\nX-HTTP-Method: PUT\r\n\r\n{}")), wantCode: apierr.XMethodIncorrectCount, wantIndex: 0},
		{name: "X-HTTP-Method GET", body: changesetBody(op("POST http://h/a/t HTTP/1.1\r\nX-HTTP-Method: GET\r\n\r\n{}")), wantCode: apierr.XMethodIncorrectValue, wantIndex: 0},
		{name: "X-HTTP-Method list", body: changesetBody(op("POST http://h/a/t HTTP/1.1\r\nX-HTTP-Method: MERGE, PUT\r\n\r\n{}")), wantCode: apierr.XMethodIncorrectValue, wantIndex: 0},
		{name: "ftp URL", body: changesetBody(op("POST ftp://h/a/t HTTP/1.1\r\n\r\n{}")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "URL without scheme", body: changesetBody(op("POST devstoreaccount1/t HTTP/1.1\r\n\r\n{}")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "URL without host", body: changesetBody(op("POST http:///a/t HTTP/1.1\r\n\r\n{}")), wantCode: apierr.InvalidInput, wantIndex: 0},
		{name: "error carries the embedded Content-ID", body: changesetBody(op(insertRequest), op("HEAD http://h/a/t HTTP/1.1\r\nContent-ID: 9\r\n\r\n")), wantCode: apierr.InvalidInput, wantIndex: 1, wantCID: "9"},
		{name: "query that is a POST", body: queryBody(insertRequest), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "query with a malformed request line", body: queryBody("GET\r\n\r\n"), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "query tunneled through X-HTTP-Method", body: queryBody("GET http://h/a/t() HTTP/1.1\r\nX-HTTP-Method: DELETE\r\n\r\n"), wantCode: apierr.XMethodNotUsingPost, wantIndex: -1},
		// An operation's headers must frame its body as the changeset does,
		// or the whole batch is refused: nothing of it is applied.
		{name: "Content-Length over the body", body: changesetBody(op(insertRequest), op(framedPut("999999", `{"V":"replaced"}`))), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "Content-Length under the body", body: changesetBody(op(framedPut("5", `{"V":"replaced"}`))), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "Content-Length on a body-less DELETE", body: changesetBody(op("DELETE http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nIf-Match: *\r\nContent-Length: 10\r\n\r\n")), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "negative Content-Length", body: changesetBody(op(framedPut("-16", `{"V":"replaced"}`))), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "Content-Length not a number", body: changesetBody(op(framedPut("16x", `{"V":"replaced"}`))), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "Content-Length past int64", body: changesetBody(op(framedPut("99999999999999999999", `{"V":"replaced"}`))), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "two Content-Lengths that disagree", body: changesetBody(op("PUT http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nContent-Length: 16\r\nContent-Length: 17\r\n\r\n{\"V\":\"replaced\"}")), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "Transfer-Encoding chunked", body: changesetBody(op("PUT http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n{\"V\":\"replaced\"}\r\n0\r\n\r\n")), wantCode: apierr.InvalidInput, wantIndex: -1},
		{name: "Content-MD5 of another body", body: changesetBody(op("PUT http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nContent-MD5: " + md5Of("{}") + "\r\n\r\n{\"V\":\"replaced\"}")), wantCode: apierr.Md5Mismatch, wantIndex: -1},
		{name: "Content-MD5 not base64", body: changesetBody(op("PUT http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nContent-MD5: nope\r\n\r\n{}")), wantCode: apierr.InvalidHeaderValue, wantIndex: -1},
		{name: "query with a Content-Length over its empty body", body: queryBody("GET http://h/a/t() HTTP/1.1\r\nContent-Length: 999999\r\n\r\n"), wantCode: apierr.InvalidInput, wantIndex: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			contentType := tt.contentType
			if contentType == "" {
				contentType = testContentType
			}
			req, err := batch.Parse(contentType, strings.NewReader(tt.body))
			if err == nil {
				t.Fatalf("Parse succeeded with %d operations, want %s", len(req.Operations), tt.wantCode)
			}
			if req != nil {
				t.Errorf("Parse returned a request along with %v", err)
			}
			apiErr, ok := apierr.As(err)
			if !ok {
				t.Fatalf("error %v is not an *apierr.Error", err)
			}
			if apiErr.Code != tt.wantCode {
				t.Errorf("code = %s, want %s (%v)", apiErr.Code, tt.wantCode, err)
			}
			wantStatus := tt.wantStatus
			if wantStatus == 0 {
				wantStatus = http.StatusBadRequest
			}
			if apiErr.HTTPStatus() != wantStatus {
				t.Errorf("status = %d, want %d", apiErr.HTTPStatus(), wantStatus)
			}
			var opErr *batch.OperationError
			isOp := errors.As(err, &opErr)
			switch {
			case tt.wantIndex < 0 && isOp:
				t.Errorf("got an OperationError at %d, want a whole-request error: %v", opErr.Index, err)
			case tt.wantIndex >= 0 && !isOp:
				t.Errorf("got a whole-request error, want an OperationError at %d: %v", tt.wantIndex, err)
			case isOp && (opErr.Index != tt.wantIndex || opErr.ContentID != tt.wantCID):
				t.Errorf("OperationError at %d with Content-ID %q, want %d and %q", opErr.Index, opErr.ContentID, tt.wantIndex, tt.wantCID)
			}
			if tt.wantMessage != "" && apiErr.Text() != tt.wantMessage {
				t.Errorf("message = %q, want %q", apiErr.Text(), tt.wantMessage)
			}
		})
	}
}

func md5Of(s string) string {
	sum := md5.Sum([]byte(s))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// framedPut is a PUT of body that declares the given Content-Length.
func framedPut(contentLength, body string) string {
	return "PUT http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: " + contentLength + "\r\n\r\n" + body
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestParseMaxBytesReader(t *testing.T) {
	t.Parallel()
	body := http.MaxBytesReader(nil, io.NopCloser(strings.NewReader(changesetBody(op(insertRequest)))), 10)
	_, err := batch.Parse(testContentType, body)
	apiErr, ok := apierr.As(err)
	if !ok || apiErr.Code != apierr.RequestBodyTooLarge || apiErr.HTTPStatus() != http.StatusRequestEntityTooLarge {
		t.Fatalf("Parse error = %v, want 413 RequestBodyTooLarge", err)
	}
}

func TestParseReadError(t *testing.T) {
	t.Parallel()
	_, err := batch.Parse(testContentType, failingReader{})
	apiErr, ok := apierr.As(err)
	if !ok || apiErr.Code != apierr.InvalidInput {
		t.Fatalf("Parse error = %v, want InvalidInput", err)
	}
	if !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("error %v does not keep its cause", err)
	}
}

// TestParseTolerances covers inputs that are odd but legal, or that real
// clients send.
func TestParseTolerances(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		want        []string
	}{
		{
			name: "preamble and epilogue",
			body: "this is a preamble\r\n" + changesetBody(op(insertRequest)) + "and an epilogue\r\n",
			want: []string{`0 POST host=127.0.0.1:10002 path=/devstoreaccount1/t query= cid= if-match= prefer= body={"PartitionKey":"p","RowKey":"r"}`},
		},
		{
			name: "quoted boundary and upper-case media type", contentType: `Multipart/Mixed; boundary="batch_b"`,
			body: changesetBody(op(insertRequest)),
			want: []string{`0 POST host=127.0.0.1:10002 path=/devstoreaccount1/t query= cid= if-match= prefer= body={"PartitionKey":"p","RowKey":"r"}`},
		},
		{
			name: "quoted changeset boundary and transport padding",
			body: "--batch_b  \r\nContent-Type: multipart/mixed; boundary=\"changeset_c\"\r\n\r\n--changeset_c\t\r\n" + op(deleteRequest) + "\r\n--changeset_c--\r\n--batch_b--",
			want: []string{`0 DELETE host=127.0.0.1:10002 path=/devstoreaccount1/t(PartitionKey='p',RowKey='r') query= cid= if-match=* prefer= body=`},
		},
		{
			name: "POST tunneling MERGE, PUT and DELETE",
			body: changesetBody(
				op("POST http://h/a/t(PartitionKey='p',RowKey='1') HTTP/1.1\r\nX-HTTP-Method: MERGE\r\nIf-Match: *\r\n\r\n{}"),
				op("POST http://h/a/t(PartitionKey='p',RowKey='2') HTTP/1.1\r\nX-HTTP-Method: put\r\n\r\n{}"),
				op("POST http://h/a/t(PartitionKey='p',RowKey='3') HTTP/1.1\r\nX-HTTP-Method: DELETE\r\nIf-Match: *\r\n\r\n"),
				op("POST http://h/a/t(PartitionKey='p',RowKey='4') HTTP/1.1\r\nX-HTTP-Method: PATCH\r\n\r\n{}"),
			),
			want: []string{
				`0 MERGE host=h path=/a/t(PartitionKey='p',RowKey='1') query= cid= if-match=* prefer= body={}`,
				`1 PUT host=h path=/a/t(PartitionKey='p',RowKey='2') query= cid= if-match= prefer= body={}`,
				`2 DELETE host=h path=/a/t(PartitionKey='p',RowKey='3') query= cid= if-match=* prefer= body=`,
				`3 PATCH host=h path=/a/t(PartitionKey='p',RowKey='4') query= cid= if-match= prefer= body={}`,
			},
		},
		{
			name: "origin-form URL with Host",
			body: changesetBody(op("POST /devstoreaccount1/t?timeout=5 HTTP/1.1\r\nHost: 127.0.0.1:10002\r\n\r\n{}")),
			want: []string{`0 POST host=127.0.0.1:10002 path=/devstoreaccount1/t query=timeout=5 cid= if-match= prefer= body={}`},
		},
		{
			name: "URL with only an authority",
			body: changesetBody(op("POST http://h?x=1 HTTP/1.1\r\n\r\n{}")),
			want: []string{`0 POST host=h path= query=x=1 cid= if-match= prefer= body={}`},
		},
		{
			name: "blank lines before the request line and around the body",
			body: changesetBody(op("\r\n\r\n" + "POST http://h/a/t HTTP/1.1\r\n\r\n\r\n  {\"a\":1}\t\r\n\r\n")),
			want: []string{`0 POST host=h path=/a/t query= cid= if-match= prefer= body={"a":1}`},
		},
		{
			name: "Content-Length and Content-MD5 of the body exactly, and of the body without the whitespace around it",
			body: changesetBody(
				op(framedPut("16", `{"V":"replaced"}`)),
				op("PUT http://h/a/t(PartitionKey='p',RowKey='s') HTTP/1.1\r\nContent-Length: 16\r\nContent-Length: 16\r\n\r\n\r\n{\"V\":\"replaced\"} "),
				op("DELETE http://h/a/t(PartitionKey='p',RowKey='t') HTTP/1.1\r\nIf-Match: *\r\nContent-Length: 0\r\n\r\n"),
				op("PUT http://h/a/t(PartitionKey='p',RowKey='u') HTTP/1.1\r\nContent-MD5: "+md5Of(`{"V":"replaced"}`)+"\r\n\r\n{\"V\":\"replaced\"}"),
				// A Content-MD5 of the body without the whitespace around it.
				op("PUT http://h/a/t(PartitionKey='p',RowKey='v') HTTP/1.1\r\nContent-MD5: "+md5Of(`{"V":"replaced"}`)+"\r\n\r\n\r\n {\"V\":\"replaced\"}\t"),
			),
			want: []string{
				`0 PUT host=h path=/a/t(PartitionKey='p',RowKey='r') query= cid= if-match= prefer= body={"V":"replaced"}`,
				`1 PUT host=h path=/a/t(PartitionKey='p',RowKey='s') query= cid= if-match= prefer= body={"V":"replaced"}`,
				`2 DELETE host=h path=/a/t(PartitionKey='p',RowKey='t') query= cid= if-match=* prefer= body=`,
				`3 PUT host=h path=/a/t(PartitionKey='p',RowKey='u') query= cid= if-match= prefer= body={"V":"replaced"}`,
				`4 PUT host=h path=/a/t(PartitionKey='p',RowKey='v') query= cid= if-match= prefer= body={"V":"replaced"}`,
			},
		},
		{
			name: "MIME Content-ID wins over the embedded one",
			body: changesetBody("Content-Type: application/http\r\nContent-ID: 5\r\n\r\nPOST http://h/a/t HTTP/1.1\r\nContent-ID: 6\r\n\r\n{}"),
			want: []string{`0 POST host=h path=/a/t query= cid=5 if-match= prefer= body={}`},
		},
		{
			name: "a boundary-like line inside a body is not a delimiter",
			body: changesetBody(op("POST http://h/a/t HTTP/1.1\r\n\r\n{\"a\":\r\n\"--changeset_cx\", \"b\":\" --changeset_c\"}")),
			want: []string{"0 POST host=h path=/a/t query= cid= if-match= prefer= body={\"a\":\r\n\"--changeset_cx\", \"b\":\" --changeset_c\"}"},
		},
		{
			name: "operation without headers or body",
			body: changesetBody(op("DELETE http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1")),
			want: []string{`0 DELETE host=h path=/a/t(PartitionKey='p',RowKey='r') query= cid= if-match= prefer= body=`},
		},
		{
			name: "exactly 100 operations",
			body: changesetBody(repeat(op(deleteRequest), model.MaxBatchOperations)...),
			want: repeatIndexed(`%d DELETE host=127.0.0.1:10002 path=/devstoreaccount1/t(PartitionKey='p',RowKey='r') query= cid= if-match=* prefer= body=`, model.MaxBatchOperations),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			contentType := tt.contentType
			if contentType == "" {
				contentType = testContentType
			}
			req, err := batch.Parse(contentType, bytes.NewReader([]byte(tt.body)))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var got []string
			for _, op := range req.Operations {
				got = append(got, describe(op))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func repeatIndexed(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}

// TestParseEmptyChangeset: a changeset without operations is no error.
// Azure answers it 202 with an empty changeset response (found replaying
// the legacy Python SDK's recordings in Azure/azure-cosmos-table-python
// azure-cosmosdb-table/tests/recordings), so it parses to a request of no
// operations, and AppendResponse writes that answer.
func TestParseEmptyChangeset(t *testing.T) {
	t.Parallel()
	req, err := batch.Parse("multipart/mixed; boundary=batch_b", strings.NewReader(changesetBody()))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if req.IsQuery || len(req.Operations) != 0 || req.ChangesetBoundary != "changeset_c" {
		t.Fatalf("got IsQuery %v, %d operations, changeset boundary %q; want a changeset of none", req.IsQuery, len(req.Operations), req.ChangesetBoundary)
	}
	body, err := batch.AppendResponse(nil, batch.Boundaries{Batch: "b1", Changeset: "c1"}, nil)
	if err != nil {
		t.Fatalf("AppendResponse of no parts: %v", err)
	}
	const want = "--batchresponse_b1\r\nContent-Type: multipart/mixed; boundary=changesetresponse_c1\r\n\r\n" +
		"--changesetresponse_c1--\r\n--batchresponse_b1--\r\n"
	if string(body) != want {
		t.Fatalf("empty changeset response:\n%q\nwant\n%q", body, want)
	}
}
