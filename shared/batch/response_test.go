package batch_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

// TestWriteMatchesRecordedAzure rebuilds responses recorded from Azure
// (testdata/azure_*.response: the JS SDK's recordings of 2020 to 2022, the
// legacy Node SDK's of 2014, and the over-100 failure the Azurite team
// captured from Azure in 2021) from the same ids, ETags and URLs, and
// requires the same bytes.
func TestWriteMatchesRecordedAzure(t *testing.T) {
	t.Parallel()
	const jsTable = "https://fakeaccountname.table.core.windows.net/batchTableTestnode"
	location := func(rowKey string) string {
		return jsTable + "(PartitionKey='batchTest',RowKey='" + rowKey + "')"
	}
	withContentID := func(r batch.Response, id string) batch.Response {
		r.ContentID = id
		return r
	}
	tests := []struct {
		name  string
		file  string
		ids   batch.Boundaries
		write func(t *testing.T, w io.Writer, b batch.Boundaries) error
	}{
		{
			name: "inserts with return-no-content", file: "azure_insert_no_content.response",
			ids: batch.Boundaries{Batch: "febaef47-2941-4a00-871f-fd96cdd1a29b", Changeset: "e84882fb-2925-4ad7-9b56-073bb385884c"},
			write: func(t *testing.T, w io.Writer, b batch.Boundaries) error {
				etag := `W/"datetime'2022-02-01T20%3A52%3A47.0676669Z'"`
				return batch.WriteResponse(w, b, []batch.Response{
					batch.InsertedNoContent(location("1"), etag),
					batch.InsertedNoContent(location("2"), etag),
					batch.InsertedNoContent(location("3"), etag),
				})
			},
		},
		{
			name: "updates", file: "azure_update.response",
			ids: batch.Boundaries{Batch: "5226bed3-bd64-496e-99b9-6f1b251bf0e2", Changeset: "10c2237d-13a6-4655-a07e-a9b38595baa0"},
			write: func(t *testing.T, w io.Writer, b batch.Boundaries) error {
				etag := `W/"datetime'2022-02-01T20%3A52%3A47.1566948Z'"`
				return batch.WriteResponse(w, b, []batch.Response{batch.Updated(etag), batch.Updated(etag), batch.Updated(etag)})
			},
		},
		{
			name: "upserts", file: "azure_upsert.response",
			ids: batch.Boundaries{Batch: "9c6efa18-9395-438d-a090-0c78e420c08d", Changeset: "b7d7108d-43a5-41a2-8868-f8245dd28c6d"},
			write: func(t *testing.T, w io.Writer, b batch.Boundaries) error {
				etag := `W/"datetime'2022-02-01T20%3A52%3A47.3146062Z'"`
				return batch.WriteResponse(w, b, []batch.Response{batch.Updated(etag), batch.Updated(etag), batch.Updated(etag), batch.Updated(etag)})
			},
		},
		{
			name: "deletes", file: "azure_delete.response",
			ids: batch.Boundaries{Batch: "0e4a8e7e-c06b-41f1-93e5-3a84801abeb2", Changeset: "9f199607-e070-4712-a44f-eb57a93bf295"},
			write: func(t *testing.T, w io.Writer, b batch.Boundaries) error {
				return batch.WriteResponse(w, b, []batch.Response{batch.Deleted(), batch.Deleted(), batch.Deleted()})
			},
		},
		{
			name: "Content-ID echoed and a 201 with the entity", file: "azure_content_id_201.response",
			ids: batch.Boundaries{Batch: "e8e693a9-3575-4a9e-9ae1-0ffc7eb59b06", Changeset: "6ab495d3-a2ad-44d7-a11e-3f347705a1c0"},
			write: func(t *testing.T, w io.Writer, b batch.Boundaries) error {
				entity := `{"odata.metadata":"https://dummy.table.core.windows.net/$metadata#testtable/@Element","PartitionKey":"tests","RowKey":"insert23","Timestamp":"2014-02-03T10:01:42.4236239Z"}`
				return batch.WriteResponse(w, b, []batch.Response{
					withContentID(batch.Updated(`W/"datetime'2014-02-03T10%3A01%3A42.4998806Z'"`), "0"),
					withContentID(batch.Inserted("https://dummy.table.core.windows.net/testtable(PartitionKey='tests',RowKey='insert23')",
						`W/"datetime'2014-02-03T10%3A01%3A42.4236239Z'"`, batch.JSONContentType, []byte(entity)), "1"),
					withContentID(batch.Updated(`W/"datetime'2014-02-03T10%3A01%3A42.5008806Z'"`), "2"),
				})
			},
		},
		{
			name: "failure: table not found", file: "azure_failure_table_not_found.response",
			ids: batch.Boundaries{Batch: "78d1f87d-f77f-4c3d-ba0e-e84f1627fd44", Changeset: "77edc21f-2b59-4d25-8dc0-7427c7a25e40"},
			write: func(t *testing.T, w io.Writer, b batch.Boundaries) error {
				failure := &batch.OperationError{Index: 0, Err: apierr.New(apierr.TableNotFound)}
				return batch.WriteFailure(w, b, failure, "678247da-6002-003f-5376-981e25000000", mustTime(t, "2020-10-02T04:44:44.0585931Z"))
			},
		},
		{
			name: "failure: more than 100 operations, straight from Parse", file: "azure_failure_too_many_operations.response",
			ids: batch.Boundaries{Batch: "c758570b-52bd-47c4-8e80-d368a0c0f310", Changeset: "77dfbe65-cb7f-4bdf-a8f7-626dbfacd436"},
			write: func(t *testing.T, w io.Writer, b batch.Boundaries) error {
				_, err := batch.Parse(testContentType, strings.NewReader(changesetBody(repeat(op(insertRequest), 101)...)))
				var failure *batch.OperationError
				if !errors.As(err, &failure) {
					t.Fatalf("Parse error = %v, want an OperationError", err)
				}
				return batch.WriteFailure(w, b, failure, "8d58a05b-8002-0049-573d-384cd1000000", mustTime(t, "2021-04-23T12:40:31.4944778Z"))
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(t, &buf, tt.ids); err != nil {
				t.Fatalf("write: %v", err)
			}
			want := readFixture(t, tt.file)
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("bytes differ from the Azure recording %s\ngot:\n%q\nwant:\n%q", tt.file, buf.Bytes(), want)
			}
			if got, want := tt.ids.ContentType(), "multipart/mixed; boundary=batchresponse_"+tt.ids.Batch; got != want {
				t.Errorf("ContentType() = %q, want %q", got, want)
			}
		})
	}
}

// TestWriteGolden covers layouts with no byte-exact Azure recording: the
// query response (laid out as the REST reference's "Sample Response for
// Queries"), a query failure, extra headers and a 201 with
// Preference-Applied. Run with -update to rewrite.
func TestWriteGolden(t *testing.T) {
	t.Parallel()
	ids := batch.Boundaries{Batch: "0a568496-fb38-4a83-9984-5908d7f4c63d", Changeset: "6cc856b4-8cb9-41eb-b8d2-bb73475c6cec"}
	at := mustTime(t, "2013-10-14T19:21:58.089004Z")
	entity := `{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Blogs/@Element","odata.etag":"W/\"datetime'2013-10-14T18%3A25%3A49.8922467Z'\"","PartitionKey":"Channel_19","RowKey":"2","Timestamp":"2013-10-14T18:25:49.8922467Z","Rating":9,"Text":"Azure..."}`
	tests := []struct {
		name  string
		file  string
		write func(w io.Writer) error
	}{
		{
			name: "query response", file: "golden_query.response",
			write: func(w io.Writer) error {
				return batch.WriteQueryResponse(w, ids, batch.Retrieved(`W/"datetime'2013-10-14T18%3A25%3A49.8922467Z'"`, batch.JSONContentType, []byte(entity)))
			},
		},
		{
			name: "query failure", file: "golden_query_failure.response",
			write: func(w io.Writer) error {
				part, err := batch.FailureResponse(&batch.OperationError{Index: 0, Err: apierr.New(apierr.ResourceNotFound)}, "6f2aafa3-19e9-434c-85f2-d178941c2d4b", at)
				if err != nil {
					return err
				}
				return batch.WriteQueryResponse(w, ids, part)
			},
		},
		{
			name: "query page with continuation headers", file: "golden_query_continuation.response",
			write: func(w io.Writer) error {
				part := batch.Retrieved("", batch.JSONContentType, []byte(`{"odata.metadata":"https://myaccount.table.core.windows.net/$metadata#Blogs","value":[]}`))
				part.Header = http.Header{
					// Azure's spelling; a literal map key is written as is.
					"x-ms-continuation-NextRowKey":       {"1!8!cjEwMQ--"},
					"x-ms-continuation-NextPartitionKey": {"1!4!cGs-"},
				}
				return batch.WriteQueryResponse(w, ids, part)
			},
		},
		{
			name: "insert returning content with Content-ID", file: "golden_insert_content.response",
			write: func(w io.Writer) error {
				part := batch.Inserted("https://myaccount.table.core.windows.net/Blogs(PartitionKey='Channel_19',RowKey='2')",
					`W/"datetime'2013-10-14T18%3A25%3A49.8922467Z'"`, batch.JSONContentType, []byte(entity))
				part.ContentID = "1"
				part.PreferenceApplied = "return-content"
				return batch.WriteResponse(w, ids, []batch.Response{part})
			},
		},
		{
			name: "failure with Content-ID and a detail", file: "golden_failure_detail.response",
			write: func(w io.Writer) error {
				failure := &batch.OperationError{Index: 3, ContentID: "4", Err: apierr.Newf(apierr.PropertyValueTooLarge, "Property <Text> & more.")}
				return batch.WriteFailure(w, ids, failure, "45ac953e-a4a5-42ba-9b4d-97bf74a8a32e", at)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf); err != nil {
				t.Fatalf("write: %v", err)
			}
			path := filepath.Join("testdata", tt.file)
			if *update {
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want := readFixture(t, tt.file)
			if !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("bytes differ from %s (run with -update if intended)\ngot:\n%q", tt.file, buf.Bytes())
			}
		})
	}
}

// parsedPart is one response part as a generic MIME and HTTP parser sees
// it.
type parsedPart struct {
	status int
	header http.Header
	body   string
}

// parseWithStdlib reads a batch response the way Go's mime/multipart and
// net/http (like Python's email package and http.client) read it.
func parseWithStdlib(t *testing.T, contentType string, body []byte) []parsedPart {
	t.Helper()
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "multipart/mixed" {
		t.Fatalf("Content-Type %q: %v", contentType, err)
	}
	var parts []parsedPart
	var walk func(r *multipart.Reader)
	walk = func(r *multipart.Reader) {
		for {
			p, err := r.NextPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("NextPart: %v", err)
			}
			mt, ps, err := mime.ParseMediaType(p.Header.Get("Content-Type"))
			if err != nil {
				t.Fatalf("part Content-Type: %v", err)
			}
			if mt == "multipart/mixed" {
				walk(multipart.NewReader(p, ps["boundary"]))
				continue
			}
			resp, err := http.ReadResponse(bufio.NewReader(p), nil)
			if err != nil {
				t.Fatalf("ReadResponse: %v", err)
			}
			data, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatalf("reading part body: %v", err)
			}
			parts = append(parts, parsedPart{status: resp.StatusCode, header: resp.Header, body: string(data)})
		}
	}
	walk(multipart.NewReader(bytes.NewReader(body), params["boundary"]))
	return parts
}

// TestResponsesParseAsMultipart reads every recorded and golden response
// with generic parsers and checks what clients pick out of the parts.
func TestResponsesParseAsMultipart(t *testing.T) {
	t.Parallel()
	ids := batch.Boundaries{Batch: "b1", Changeset: "c1"}
	var buf bytes.Buffer
	err := batch.WriteResponse(&buf, ids, []batch.Response{
		batch.InsertedNoContent("http://h/a/t(PartitionKey='p',RowKey='r1')", `W/"e1"`),
		batch.Updated(`W/"e2"`),
		batch.Deleted(),
	})
	if err != nil {
		t.Fatal(err)
	}
	parts := parseWithStdlib(t, ids.ContentType(), buf.Bytes())
	if len(parts) != 3 {
		t.Fatalf("got %d parts, want 3", len(parts))
	}
	wants := []struct {
		etag, location, dsv string
	}{
		{`W/"e1"`, "http://h/a/t(PartitionKey='p',RowKey='r1')", "3.0;"},
		{`W/"e2"`, "", "1.0;"},
		{"", "", "1.0;"},
	}
	for i, want := range wants {
		p := parts[i]
		if p.status != http.StatusNoContent || p.body != "" {
			t.Errorf("part %d: status %d body %q", i, p.status, p.body)
		}
		if p.header.Get("ETag") != want.etag || p.header.Get("Location") != want.location || p.header.Get("DataServiceVersion") != want.dsv {
			t.Errorf("part %d headers = %v", i, p.header)
		}
		if p.header.Get("X-Content-Type-Options") != "nosniff" || p.header.Get("Cache-Control") != "no-cache" {
			t.Errorf("part %d lacks Azure's fixed headers: %v", i, p.header)
		}
	}

	for _, file := range []string{"azure_content_id_201.response", "azure_failure_table_not_found.response", "golden_query.response", "golden_failure_detail.response"} {
		data := readFixture(t, file)
		boundary := string(bytes.TrimPrefix(bytes.SplitN(data, []byte("\r\n"), 2)[0], []byte("--")))
		if got := parseWithStdlib(t, "multipart/mixed; boundary="+boundary, data); len(got) == 0 {
			t.Errorf("%s: no parts", file)
		}
	}
}

// TestFailureFitsSDKParsers checks the failure body against what each SDK
// does with it: .NET matches `"value":"(?<index>\d+):` on the raw JSON and
// requires the Content-Type prefix "multipart/mixed; boundary="; JS finds
// the body with /\{(.*)\}/ (no newlines) and reads odata.error; Python
// splits the message at the first colon.
func TestFailureFitsSDKParsers(t *testing.T) {
	t.Parallel()
	ids := batch.Boundaries{Batch: "b1", Changeset: "c1"}
	failure := &batch.OperationError{Index: 42, Err: apierr.New(apierr.UpdateConditionNotSatisfied)}
	var buf bytes.Buffer
	if err := batch.WriteFailure(&buf, ids, failure, "r-1", time.Date(2024, 1, 2, 3, 4, 5, 600, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ids.ContentType(), "multipart/mixed; boundary=") {
		t.Errorf(".NET needs the Content-Type prefix, got %q", ids.ContentType())
	}
	dotnet := regexp.MustCompile(`"value":"(?P<index>[\d]+):`).FindSubmatch(buf.Bytes())
	if dotnet == nil || string(dotnet[1]) != "42" {
		t.Errorf(".NET index pattern found %q in:\n%s", dotnet, buf.Bytes())
	}
	js := regexp.MustCompile(`\{(.*)\}`).Find(buf.Bytes())
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Message struct {
				Lang  string `json:"lang"`
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal(js, &body); err != nil {
		t.Fatalf("JS body pattern found %q: %v", js, err)
	}
	if body.Error.Code != "UpdateConditionNotSatisfied" || body.Error.Message.Lang != "en-US" {
		t.Errorf("odata.error = %+v", body.Error)
	}
	want := "42:The update condition specified in the request was not satisfied.\nRequestId:r-1\nTime:2024-01-02T03:04:05.0000006Z"
	if body.Error.Message.Value != want {
		t.Errorf("message = %q, want %q", body.Error.Message.Value, want)
	}
	index, _, _ := strings.Cut(body.Error.Message.Value, ":")
	if n, err := strconv.Atoi(index); err != nil || n != 42 {
		t.Errorf("Python index = %q", index)
	}
	parts := parseWithStdlib(t, ids.ContentType(), buf.Bytes())
	if len(parts) != 1 || parts[0].status != http.StatusPreconditionFailed {
		t.Errorf("parts = %+v, want one 412", parts)
	}
}

func TestFailureMessage(t *testing.T) {
	t.Parallel()
	at := time.Date(2020, 10, 2, 4, 44, 44, 58593100, time.FixedZone("CEST", 2*3600))
	tests := []struct {
		name  string
		index int
		err   *apierr.Error
		want  string
	}{
		{name: "default message", index: 2, err: apierr.New(apierr.EntityAlreadyExists),
			want: "2:The specified entity already exists.\nRequestId:id\nTime:2020-10-02T02:44:44.0585931Z"},
		{name: "own message", index: 0, err: &apierr.Error{Code: apierr.InvalidInput, Message: "Bad."},
			want: "0:Bad.\nRequestId:id\nTime:2020-10-02T02:44:44.0585931Z"},
		{name: "detail on its own line", index: 99, err: apierr.Newf(apierr.InvalidInput, "Value %d.", 7),
			want: "99:One of the request inputs is not valid.\nValue 7.\nRequestId:id\nTime:2020-10-02T02:44:44.0585931Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := batch.FailureMessage(tt.index, tt.err, "id", at); got != tt.want {
				t.Errorf("FailureMessage = %q, want %q", got, tt.want)
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// TestWriteErrors: the writers refuse input that would corrupt the body,
// and write nothing when they do.
func TestWriteErrors(t *testing.T) {
	t.Parallel()
	ids := batch.Boundaries{Batch: "b1", Changeset: "c1"}
	ok := batch.Updated(`W/"e"`)
	withHeader := func(r batch.Response, k, v string) batch.Response {
		r.Header = http.Header{k: {v}}
		return r
	}
	tests := []struct {
		name  string
		write func(w io.Writer) error
	}{
		{name: "error part in a success response", write: func(w io.Writer) error {
			return batch.WriteResponse(w, ids, []batch.Response{ok, {Status: http.StatusConflict}})
		}},
		{name: "status 0", write: func(w io.Writer) error { return batch.WriteResponse(w, ids, []batch.Response{{}}) }},
		{name: "status 100", write: func(w io.Writer) error { return batch.WriteResponse(w, ids, []batch.Response{{Status: 100}}) }},
		{name: "unknown status", write: func(w io.Writer) error { return batch.WriteResponse(w, ids, []batch.Response{{Status: 299}}) }},
		{name: "empty batch id", write: func(w io.Writer) error {
			return batch.WriteResponse(w, batch.Boundaries{Changeset: "c"}, []batch.Response{ok})
		}},
		{name: "empty changeset id", write: func(w io.Writer) error {
			return batch.WriteResponse(w, batch.Boundaries{Batch: "b"}, []batch.Response{ok})
		}},
		{name: "boundary id with a space", write: func(w io.Writer) error {
			return batch.WriteResponse(w, batch.Boundaries{Batch: "b 1", Changeset: "c"}, []batch.Response{ok})
		}},
		{name: "boundary id with a colon", write: func(w io.Writer) error {
			return batch.WriteQueryResponse(w, batch.Boundaries{Batch: "b:1"}, batch.Retrieved("", batch.JSONContentType, []byte("{}")))
		}},
		{name: "boundary over 70 characters", write: func(w io.Writer) error {
			return batch.WriteResponse(w, batch.Boundaries{Batch: strings.Repeat("b", 60), Changeset: "c"}, []batch.Response{ok})
		}},
		{name: "ETag with a line break", write: func(w io.Writer) error {
			return batch.WriteResponse(w, ids, []batch.Response{batch.Updated("W/\"e\"\r\nX-Evil: 1")})
		}},
		{name: "Content-ID with a line break", write: func(w io.Writer) error {
			r := ok
			r.ContentID = "1\n2"
			return batch.WriteResponse(w, ids, []batch.Response{r})
		}},
		{name: "Location with a lone CR", write: func(w io.Writer) error {
			return batch.WriteResponse(w, ids, []batch.Response{batch.InsertedNoContent("http://h/t(PartitionKey='a',RowKey='b')\rX", "W/\"e\"")})
		}},
		{name: "extra header repeating a field", write: func(w io.Writer) error {
			return batch.WriteResponse(w, ids, []batch.Response{withHeader(ok, "etag", "x")})
		}},
		{name: "extra header with a bad name", write: func(w io.Writer) error {
			return batch.WriteResponse(w, ids, []batch.Response{withHeader(ok, "Bad Name", "x")})
		}},
		{name: "extra header value with a line break", write: func(w io.Writer) error {
			return batch.WriteQueryResponse(w, ids, withHeader(batch.Retrieved("", batch.JSONContentType, []byte("{}")), "X-Ms-Continuation-Nextrowkey", "a\r\nb"))
		}},
		{name: "failure without error", write: func(w io.Writer) error {
			return batch.WriteFailure(w, ids, &batch.OperationError{Index: 1}, "r", time.Time{})
		}},
		{name: "nil failure", write: func(w io.Writer) error { return batch.WriteFailure(w, ids, nil, "r", time.Time{}) }},
		{name: "failure with a success status", write: func(w io.Writer) error {
			return batch.WriteFailure(w, ids, &batch.OperationError{Err: &apierr.Error{Code: apierr.InvalidInput, Status: http.StatusFound}}, "r", time.Time{})
		}},
		{name: "failure with a line break in the Content-ID", write: func(w io.Writer) error {
			return batch.WriteFailure(w, ids, &batch.OperationError{ContentID: "1\r\n", Err: apierr.New(apierr.InvalidInput)}, "r", time.Time{})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.write(&buf); err == nil {
				t.Fatalf("write succeeded:\n%s", buf.Bytes())
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes before failing", buf.Len())
			}
		})
	}
	t.Run("writer error is returned", func(t *testing.T) {
		if err := batch.WriteResponse(failingWriter{}, ids, []batch.Response{ok}); err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("WriteResponse error = %v, want the writer's", err)
		}
		if err := batch.WriteQueryResponse(failingWriter{}, ids, batch.Deleted()); err == nil {
			t.Error("WriteQueryResponse ignored the writer's error")
		}
	})
}

func TestNewBoundaries(t *testing.T) {
	t.Parallel()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 20 {
		b, err := batch.NewBoundaries()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{b.Batch, b.Changeset} {
			if !uuid.MatchString(id) {
				t.Errorf("id %q is not a UUID v4", id)
			}
			if seen[id] {
				t.Errorf("id %q repeated", id)
			}
			seen[id] = true
		}
		if err := batch.WriteResponse(io.Discard, b, []batch.Response{batch.Deleted()}); err != nil {
			t.Errorf("random boundaries rejected: %v", err)
		}
	}
}
