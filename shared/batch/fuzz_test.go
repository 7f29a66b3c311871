package batch_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
	"github.com/tablebridge/tablebridge/shared/model"
)

// fixtureContentTypes maps each request fixture to its Content-Type.
var fixtureContentTypes = map[string]string{
	"go_all_actions.request":           goSDKContentType,
	"go_single_add.request":            goSDKContentType,
	"js_create.request":                "multipart/mixed; boundary=batch_fakeId",
	"js_update.request":                "multipart/mixed; boundary=batch_fakeId",
	"js_upsert.request":                "multipart/mixed; boundary=batch_fakeId",
	"js_delete_unclosed.request":       "multipart/mixed; boundary=batch_fakeId",
	"node_legacy_content_id.request":   "multipart/mixed; boundary=batch_0000000-0000-0000-0000-000000000000",
	"dotnet_mixed.request":             "multipart/mixed; boundary=batch_7d6b1d5a-3f2c-4e36-9c0e-2a1f5b2c9e01",
	"python_mixed.request":             "multipart/mixed; boundary=batch_3f6b2a1c-1d2e-4f3a-8b4c-5d6e7f8a9b0c",
	"rest_reference_changeset.request": "multipart/mixed; boundary=batch_a1e9d677-b28b-435e-a89e-87e6a768a431",
	"rest_reference_query.request":     "multipart/mixed; boundary=batch_f351702c-c8c8-48c6-af2c-91b809c651ce",
}

// operationMethods are the verbs Operation.Method may hold.
var operationMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, "MERGE", http.MethodDelete}

// FuzzParse: Parse never panics; every rejection is a 4xx *apierr.Error
// with no request; every accepted request keeps the package's promises and
// can be answered by the writers.
func FuzzParse(f *testing.F) {
	for file, contentType := range fixtureContentTypes {
		f.Add(contentType, readFixture(f, file))
	}
	f.Add(testContentType, []byte(changesetBody(op(insertRequest), op(deleteRequest))))
	f.Add(testContentType, []byte(queryBody(getRequest)))
	f.Add(testContentType, []byte(changesetBody(op("POST /a/t HTTP/1.1\nHost: h\nX-HTTP-Method: MERGE\nContent-ID: 1\n\n{}"))))
	f.Add(`multipart/mixed; boundary="batch_b"`, []byte("--batch_b\n--batch_b--"))

	ids := batch.Boundaries{Batch: "b", Changeset: "c"}
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req, err := batch.Parse(contentType, bytes.NewReader(body))
		if err != nil {
			if req != nil {
				t.Fatalf("Parse returned a request with error %v", err)
			}
			apiErr, ok := apierr.As(err)
			if !ok {
				t.Fatalf("error %v is not an *apierr.Error", err)
			}
			if s := apiErr.HTTPStatus(); s < 400 || s > 499 {
				t.Fatalf("error %v has status %d", err, s)
			}
			var opErr *batch.OperationError
			if errors.As(err, &opErr) {
				if opErr.Index < 0 || opErr.Index >= model.MaxBatchOperations {
					t.Fatalf("OperationError index %d", opErr.Index)
				}
				if err := batch.WriteFailure(io.Discard, ids, opErr, "r", time.Time{}); err != nil {
					t.Fatalf("WriteFailure: %v", err)
				}
			}
			return
		}
		n := len(req.Operations)
		if n == 0 || n > model.MaxBatchOperations || (req.IsQuery && n != 1) {
			t.Fatalf("%d operations, IsQuery %v", n, req.IsQuery)
		}
		parts := make([]batch.Response, n)
		for i, op := range req.Operations {
			if op.Index != i || op.URL == nil || op.Header == nil {
				t.Fatalf("operation %d malformed: %+v", i, op)
			}
			if (op.Method == http.MethodGet) != req.IsQuery || !slices.Contains(operationMethods, op.Method) {
				t.Fatalf("operation %d: method %s in a batch with IsQuery %v", i, op.Method, req.IsQuery)
			}
			parts[i] = batch.Deleted()
			parts[i].ContentID = op.ContentID
		}
		if req.IsQuery {
			err = batch.WriteQueryResponse(io.Discard, ids, parts[0])
		} else {
			err = batch.WriteResponse(io.Discard, ids, parts)
		}
		if err != nil {
			t.Fatalf("answering the parsed request: %v", err)
		}
	})
}
