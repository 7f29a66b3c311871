package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// parseBatchBody reads a $batch body with mime/multipart, the way a server
// would, and returns the changeset's requests with their bodies.
func parseBatchBody(t *testing.T, contentType string, body []byte) []*http.Request {
	t.Helper()
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "multipart/mixed" || !strings.HasPrefix(params["boundary"], "batch_") {
		t.Fatalf("batch Content-Type %q: %v", contentType, err)
	}
	outer := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	changeset, err := outer.NextPart()
	if err != nil {
		t.Fatalf("batch part: %v", err)
	}
	csType, csParams, err := mime.ParseMediaType(changeset.Header.Get("Content-Type"))
	if err != nil || csType != "multipart/mixed" || !strings.HasPrefix(csParams["boundary"], "changeset_") {
		t.Fatalf("changeset Content-Type %q: %v", changeset.Header.Get("Content-Type"), err)
	}
	inner := multipart.NewReader(changeset, csParams["boundary"])
	var reqs []*http.Request
	for {
		part, err := inner.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("changeset part %d: %v", len(reqs), err)
		}
		if got := part.Header.Get("Content-Type"); got != "application/http" {
			t.Errorf("part %d Content-Type %q", len(reqs), got)
		}
		if got := part.Header.Get("Content-Transfer-Encoding"); got != "binary" {
			t.Errorf("part %d Content-Transfer-Encoding %q", len(reqs), got)
		}
		raw, err := io.ReadAll(part)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			t.Fatalf("part %d is not an HTTP request: %v\n%s", len(reqs), err, raw)
		}
		entity, err := io.ReadAll(req.Body)
		if err != nil {
			t.Fatalf("part %d body: %v", len(reqs), err)
		}
		req.Body = io.NopCloser(bytes.NewReader(entity))
		reqs = append(reqs, req)
	}
	if _, err := outer.NextPart(); err != io.EOF {
		t.Errorf("batch holds more than one part: %v", err)
	}
	return reqs
}

// batchActions turns a bench batch body back into the SDK actions that
// should produce it.
func batchActions(t *testing.T, body []byte) []aztables.TransactionAction {
	t.Helper()
	m := regexp.MustCompile(`^--(batch_[0-9a-f-]+)\r\n`).FindSubmatch(body)
	if m == nil {
		t.Fatalf("no batch boundary at the start of %.80q", body)
	}
	var actions []aztables.TransactionAction
	for _, req := range parseBatchBody(t, "multipart/mixed; boundary="+string(m[1]), body) {
		entity, _ := io.ReadAll(req.Body)
		actions = append(actions, aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: entity})
	}
	return actions
}

var changesetBoundary = regexp.MustCompile(`boundary=(changeset_[0-9a-f-]+)`)

// replaceBoundaries rewrites the SDK's batch and changeset boundaries in
// sdkBody into the bench's.
func replaceBoundaries(t *testing.T, sdkBody, sdkType, benchType, benchBody string) string {
	t.Helper()
	sdkCS := changesetBoundary.FindStringSubmatch(sdkBody)
	benchCS := changesetBoundary.FindStringSubmatch(benchBody)
	_, sdkParams, err1 := mime.ParseMediaType(sdkType)
	_, benchParams, err2 := mime.ParseMediaType(benchType)
	if sdkCS == nil || benchCS == nil || err1 != nil || err2 != nil {
		t.Fatalf("boundaries not found: %q %q", sdkType, benchType)
	}
	out := strings.ReplaceAll(sdkBody, sdkCS[1], benchCS[1])
	return strings.ReplaceAll(out, sdkParams["boundary"], benchParams["boundary"])
}

func TestBatchBodyShape(t *testing.T) {
	t.Parallel()
	endpoint, _ := url.Parse("http://127.0.0.1:10002/devstoreaccount1")
	bb := newBatchBuilder(endpoint, "shape")
	rng := rand.New(rand.NewPCG(1, 2))
	tmpl, err := newEntityTemplate(300, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 2, MaxBatchSize} {
		t.Run(strconv.Itoa(n)+" inserts", func(t *testing.T) {
			batchID, changesetID := newUUID(rng), newUUID(rng)
			body := bb.begin(nil, batchID, changesetID)
			pk := appendPartitionKey(nil, kindBatch, 7, 3)
			for j := range n {
				entity := tmpl.appendEntity(nil, pk, appendRowKey(nil, int64(j)))
				body = bb.appendInsert(body, changesetID, j == 0, entity)
			}
			body = bb.end(body, batchID, changesetID)

			reqs := parseBatchBody(t, batchContentType(batchID), body)
			if len(reqs) != n {
				t.Fatalf("parsed %d operations, want %d", len(reqs), n)
			}
			for j, req := range reqs {
				if req.Method != http.MethodPost {
					t.Errorf("op %d method %s", j, req.Method)
				}
				wantURL := "http://127.0.0.1:10002/devstoreaccount1/shape?%24format=application%2Fjson%3Bodata%3Dminimalmetadata"
				if req.URL.String() != wantURL {
					t.Errorf("op %d URL %s, want %s", j, req.URL, wantURL)
				}
				entity, _ := io.ReadAll(req.Body)
				if req.ContentLength != int64(len(entity)) {
					t.Errorf("op %d Content-Length %d, body %d bytes", j, req.ContentLength, len(entity))
				}
				var props map[string]any
				if err := json.Unmarshal(entity, &props); err != nil {
					t.Fatalf("op %d entity: %v", j, err)
				}
				if props["PartitionKey"] != "b0007-000003" || props["RowKey"] != string(appendRowKey(nil, int64(j))) {
					t.Errorf("op %d keys %v/%v", j, props["PartitionKey"], props["RowKey"])
				}
				if req.Header.Get("Prefer") != "return-no-content" || req.Header.Get("Content-Type") != "application/json" {
					t.Errorf("op %d headers %v", j, req.Header)
				}
			}
		})
	}
}

func TestNewUUID(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	pattern := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		u := newUUID(rng)
		if !pattern.MatchString(u) {
			t.Fatalf("%q is not a version-4 UUID", u)
		}
		if seen[u] {
			t.Fatalf("%q repeated", u)
		}
		seen[u] = true
	}
}

// The response samples follow "Performing entity group transactions" in the
// Azure REST reference.
const (
	okPart = "--changesetresponse_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"HTTP/1.1 204 No Content\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 1.0;\r\n\r\n"
	failPart = "--changesetresponse_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		"HTTP/1.1 409 Conflict\r\nContent-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n\r\n" +
		`{"odata.error":{"code":"EntityAlreadyExists","message":{"lang":"en-US","value":"1:The specified entity already exists.\nRequestId:x\nTime:y"}}}` + "\r\n"
)

func batchResponse(parts ...string) []byte {
	return []byte("--batchresponse_b\r\nContent-Type: multipart/mixed; boundary=changesetresponse_c\r\n\r\n" +
		strings.Join(parts, "") + "--changesetresponse_c--\r\n--batchresponse_b--\r\n")
}

func TestCheckBatchResponse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		body    []byte
		want    int
		wantErr string
	}{
		{"all succeeded", batchResponse(okPart, okPart, okPart), 3, ""},
		{"failure part", batchResponse(failPart), 3, "batch operation failed: HTTP/1.1 409 Conflict EntityAlreadyExists: 1:The specified entity already exists."},
		{"too few responses", batchResponse(okPart, okPart), 3, "2 successful operation responses, want 3"},
		{"too many responses", batchResponse(okPart, okPart), 1, "2 successful operation responses, want 1"},
		{"empty body", nil, 1, "0 successful operation responses, want 1"},
		{"malformed status", []byte("\r\nHTTP/1.1 2x4 No\r\n"), 1, "malformed status line"},
		{"status text inside a line is ignored", []byte("x HTTP/1.1 500 Oops\r\n" + okPart), 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := checkBatchResponse(c.body, c.want)
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("error %v, want it to contain %q", err, c.wantErr)
			}
		})
	}
}
