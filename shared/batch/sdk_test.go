package batch_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
	"github.com/tablebridge/tablebridge/shared/model"
)

var update = flag.Bool("update", false, "rewrite the Go SDK request fixtures in testdata")

// The Go SDK draws random UUIDs for its boundaries and the test server has
// a random port; fixtures hold these fixed values instead.
const (
	fixtureHost        = "127.0.0.1:10002"
	fixtureBatchID     = "11111111-1111-4111-8111-111111111111"
	fixtureChangesetID = "22222222-2222-4222-8222-222222222222"
	// GoSDKContentType is the Content-Type of the go_*.request fixtures.
	goSDKContentType = "multipart/mixed; boundary=batch_" + fixtureBatchID
	sampleETag       = `W/"datetime'2024-12-23T09%3A20%3A10.1623783Z'"`
)

// goSDKActions covers every TransactionType of aztables v1.4.1, plus a
// delete with and without an ETag.
func goSDKActions(t *testing.T) []aztables.TransactionAction {
	t.Helper()
	etag := azcore.ETag(sampleETag)
	entity := func(rowKey, extra string) []byte {
		return []byte(`{"PartitionKey":"pk","RowKey":"` + rowKey + `"` + extra + `}`)
	}
	return []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: entity("r1", `,"Name":"one","Big":"9007199254740993","Big@odata.type":"Edm.Int64"`)},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: entity("r2", `,"Count":2`), IfMatch: &etag},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: entity("r3", `,"Count":3`), IfMatch: &etag},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: entity("r4", `,"Flag":true`)},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: entity("r 5 ü", `,"Text":"<&>"`)},
		{ActionType: aztables.TransactionTypeDelete, Entity: entity("r6", "")},
		{ActionType: aztables.TransactionTypeDelete, Entity: entity("r7", ""), IfMatch: &etag},
	}
}

// sdkExchange is one $batch round trip between the Go SDK and a test
// server: what the SDK sent and what it made of the answer.
type sdkExchange struct {
	contentType string
	body        []byte
	host        string
	err         error
}

// submitThroughSDK sends actions with aztables.Client.SubmitTransaction to
// a test server that records the request and answers with respond.
func submitThroughSDK(t *testing.T, actions []aztables.TransactionAction, respond func(w http.ResponseWriter, contentType string, body []byte)) sdkExchange {
	t.Helper()
	var ex sdkExchange
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/devstoreaccount1/$batch" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.Path, http.StatusBadRequest)
			return
		}
		ex.contentType, ex.body = r.Header.Get("Content-Type"), body
		respond(w, ex.contentType, body)
	}))
	defer srv.Close()
	ex.host = strings.TrimPrefix(srv.URL, "http://")

	client, err := aztables.NewClientWithNoCredential(srv.URL+"/devstoreaccount1/mytable", &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}},
	})
	if err != nil {
		t.Fatalf("NewClientWithNoCredential: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, ex.err = client.SubmitTransaction(ctx, actions, nil)
	return ex
}

// normalize replaces the SDK's random boundaries and the server's port
// with the fixture values.
func (ex sdkExchange) normalize(t *testing.T) []byte {
	t.Helper()
	_, params, err := mime.ParseMediaType(ex.contentType)
	if err != nil {
		t.Fatalf("request Content-Type %q: %v", ex.contentType, err)
	}
	batchID := strings.TrimPrefix(params["boundary"], "batch_")
	_, after, ok := bytes.Cut(ex.body, []byte("boundary=changeset_"))
	if !ok || len(after) < 36 {
		t.Fatalf("no changeset boundary in the SDK request:\n%s", ex.body)
	}
	changesetID := string(after[:36])
	out := bytes.ReplaceAll(ex.body, []byte(batchID), []byte(fixtureBatchID))
	out = bytes.ReplaceAll(out, []byte(changesetID), []byte(fixtureChangesetID))
	return bytes.ReplaceAll(out, []byte(ex.host), []byte(fixtureHost))
}

// answerSuccess parses the request with batch.Parse and answers every
// operation the way Azure does.
func answerSuccess(t *testing.T) func(http.ResponseWriter, string, []byte) {
	return func(w http.ResponseWriter, contentType string, body []byte) {
		req, err := batch.Parse(contentType, bytes.NewReader(body))
		if err != nil {
			t.Errorf("Parse: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		parts := make([]batch.Response, len(req.Operations))
		for i, op := range req.Operations {
			switch op.Method {
			case http.MethodPost:
				parts[i] = batch.InsertedNoContent(op.URL.String(), sampleETag)
			case http.MethodDelete:
				parts[i] = batch.Deleted()
			default:
				parts[i] = batch.Updated(sampleETag)
			}
			parts[i].ContentID = op.ContentID
		}
		writeBatch(t, w, func(out io.Writer, b batch.Boundaries) error { return batch.WriteResponse(out, b, parts) })
	}
}

// writeBatch sends a 202 batch response produced by write.
func writeBatch(t *testing.T, w http.ResponseWriter, write func(io.Writer, batch.Boundaries) error) {
	b, err := batch.NewBoundaries()
	if err != nil {
		t.Errorf("NewBoundaries: %v", err)
		return
	}
	var buf bytes.Buffer
	if err := write(&buf, b); err != nil {
		t.Errorf("writing the batch response: %v", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", b.ContentType())
	w.WriteHeader(batch.StatusCode)
	_, _ = w.Write(buf.Bytes())
}

// TestGoSDKRequestFixtures checks that testdata holds exactly what
// aztables v1.4.1 sends today, so the parse tests run on real SDK bytes.
// Run with -update to rewrite the fixtures.
func TestGoSDKRequestFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		file    string
		actions func(*testing.T) []aztables.TransactionAction
	}{
		{name: "every action type", file: "go_all_actions.request", actions: goSDKActions},
		{name: "single add", file: "go_single_add.request", actions: func(t *testing.T) []aztables.TransactionAction { return goSDKActions(t)[:1] }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := submitThroughSDK(t, tt.actions(t), answerSuccess(t))
			if ex.err != nil {
				t.Fatalf("SubmitTransaction: %v", ex.err)
			}
			got := ex.normalize(t)
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading fixture (run with -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the SDK now sends different bytes than %s (run with -update if intended)\ngot:\n%s", path, got)
			}
		})
	}
}

// TestGoSDKAcceptsSuccessResponse: the SDK parses WriteResponse's output
// for every action type without error.
func TestGoSDKAcceptsSuccessResponse(t *testing.T) {
	t.Parallel()
	ex := submitThroughSDK(t, goSDKActions(t), answerSuccess(t))
	if ex.err != nil {
		t.Fatalf("SubmitTransaction: %v", ex.err)
	}
}

// TestGoSDKSeesFailure: the SDK turns WriteFailure's output into an
// *azcore.ResponseError. As with Azure, whose outer 202 carries no
// x-ms-error-code, the error's status is 202 and its code is empty; the
// failure details are in the raw body.
func TestGoSDKSeesFailure(t *testing.T) {
	t.Parallel()
	at := time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)
	tests := []struct {
		name      string
		actions   []aztables.TransactionAction
		wantInner string
	}{
		{
			name:      "entity already exists at index 2",
			actions:   goSDKActions(t)[:3],
			wantInner: `"value":"2:The specified entity already exists.\nRequestId:req-1\nTime:2024-12-23T09:20:10.1623783Z"`,
		},
		{
			name:      "more than 100 operations",
			actions:   addActions(101),
			wantInner: `"value":"0:The batch request operation exceeds the maximum 100 changes per change set.`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ex := submitThroughSDK(t, tt.actions, func(w http.ResponseWriter, contentType string, body []byte) {
				req, err := batch.Parse(contentType, bytes.NewReader(body))
				var failure *batch.OperationError
				switch {
				case errors.As(err, &failure):
				case err != nil:
					t.Errorf("Parse: %v", err)
					return
				default:
					failure = req.Operations[len(req.Operations)-1].Fail(apierr.New(apierr.EntityAlreadyExists))
				}
				writeBatch(t, w, func(out io.Writer, b batch.Boundaries) error {
					return batch.WriteFailure(out, b, failure, "req-1", at)
				})
			})
			var respErr *azcore.ResponseError
			if !errors.As(ex.err, &respErr) {
				t.Fatalf("SubmitTransaction error = %v, want *azcore.ResponseError", ex.err)
			}
			if respErr.StatusCode != http.StatusAccepted || respErr.ErrorCode != "" {
				t.Errorf("ResponseError status, code = %d, %q; want 202, \"\" as with Azure", respErr.StatusCode, respErr.ErrorCode)
			}
			raw, err := io.ReadAll(respErr.RawResponse.Body)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), tt.wantInner) {
				t.Errorf("raw response lacks %s:\n%s", tt.wantInner, raw)
			}
		})
	}
}

// addActions returns n inserts in one partition.
func addActions(n int) []aztables.TransactionAction {
	actions := make([]aztables.TransactionAction, n)
	for i := range actions {
		actions[i] = aztables.TransactionAction{
			ActionType: aztables.TransactionTypeAdd,
			Entity:     []byte(fmt.Sprintf(`{"PartitionKey":"pk","RowKey":"r%03d"}`, i)),
		}
	}
	return actions
}

// TestGoSDKParsesHundredOperations: the largest legal batch parses and the
// SDK accepts its 100-part response.
func TestGoSDKParsesHundredOperations(t *testing.T) {
	t.Parallel()
	ex := submitThroughSDK(t, addActions(model.MaxBatchOperations), answerSuccess(t))
	if ex.err != nil {
		t.Fatalf("SubmitTransaction: %v", ex.err)
	}
}
