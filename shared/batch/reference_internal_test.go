package batch

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// The parser reads headers and URLs by hand for speed. These tests hold it
// to the standard library it replaced: net/textproto for header blocks and
// request lines, net/url for targets. referenceParse is the textproto-based
// Parse as it was before the rewrite, and both must agree on every input:
// same operations, or the same error.

// referenceParse is the former Parse on a body already read.
func referenceParse(contentType string, data []byte) (*Request, error) {
	boundary, err := multipartBoundary(contentType)
	if err != nil {
		return nil, invalidBatch("The batch Content-Type is not valid: %v.", err)
	}
	batchParts, err := referenceSplit(data, boundary, 1)
	if err != nil {
		return nil, invalidBatch("The batch body is malformed: %v.", err)
	}
	if len(batchParts) == 0 {
		return nil, invalidBatch("The batch contains no parts.")
	}
	if len(batchParts) > 1 {
		return nil, invalidBatch("The batch must contain exactly one changeset or one query, not more than one part.")
	}
	header, content, err := referenceHeaderBlock(batchParts[0])
	if err != nil {
		return nil, invalidBatch("The batch part is malformed: %v.", err)
	}
	req := &Request{BatchBoundary: boundary}
	switch mediaTypeOf(header.Get("Content-Type")) {
	case "multipart/mixed":
		err = referenceChangeset(req, header.Get("Content-Type"), content)
	case "application/http":
		var op Operation
		op, err = referenceOperationPart(0, header, content)
		if oe, ok := err.(*OperationError); ok {
			err = oe.Err
		}
		if err == nil && op.Method != http.MethodGet {
			err = invalidBatch("Only a GET may appear outside a changeset, not %s.", op.Method)
		}
		req.IsQuery, req.Operations = true, []Operation{op}
	default:
		err = invalidBatch("The batch part must be a changeset (multipart/mixed) or a query (application/http), not %q.", header.Get("Content-Type"))
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

func referenceChangeset(req *Request, contentType string, content []byte) error {
	boundary, err := multipartBoundary(contentType)
	if err != nil {
		return invalidBatch("The changeset Content-Type is not valid: %v.", err)
	}
	req.ChangesetBoundary = boundary
	opParts, err := referenceSplit(content, boundary, model.MaxBatchOperations)
	if err != nil {
		return invalidBatch("The changeset is malformed: %v.", err)
	}
	if len(opParts) == 0 {
		return nil
	}
	if err := model.ValidateBatchSize(len(opParts)); err != nil {
		cid := ""
		if header, _, err := referenceHeaderBlock(opParts[0]); err == nil {
			cid = strings.TrimSpace(header.Get("Content-Id"))
		}
		tooMany, _ := apierr.As(err)
		return &OperationError{Index: 0, ContentID: cid, Err: tooMany}
	}
	for i, raw := range opParts {
		header, content, err := referenceHeaderBlock(raw)
		if err != nil {
			return operationInvalid(i, "", "The operation's MIME headers are malformed: %v.", err)
		}
		op, err := referenceOperationPart(i, header, content)
		if err != nil {
			return err
		}
		if op.Method == http.MethodGet {
			return op.Fail(apierr.Newf(apierr.InvalidInput, "A query (GET) is not allowed inside a changeset."))
		}
		req.Operations = append(req.Operations, op)
	}
	return nil
}

func referenceOperationPart(index int, partHeader textproto.MIMEHeader, content []byte) (Operation, error) {
	contentID := strings.TrimSpace(partHeader.Get("Content-Id"))
	if mt := mediaTypeOf(partHeader.Get("Content-Type")); mt != "application/http" {
		return Operation{}, operationInvalid(index, contentID, "An operation's Content-Type must be application/http, not %q.", partHeader.Get("Content-Type"))
	}
	if cte := partHeader.Get("Content-Transfer-Encoding"); cte != "" && !strings.EqualFold(strings.TrimSpace(cte), "binary") {
		return Operation{}, operationInvalid(index, contentID, "An operation's Content-Transfer-Encoding must be binary, not %q.", cte)
	}
	br := bufio.NewReader(bytes.NewReader(content))
	tp := textproto.NewReader(br)
	var line string
	for {
		l, err := tp.ReadLine()
		if err != nil {
			return Operation{}, operationInvalid(index, contentID, "The operation has no request line.")
		}
		if strings.TrimSpace(l) != "" {
			line = l
			break
		}
	}
	method, target, ok := splitRequestLine(line)
	if !ok {
		return Operation{}, operationInvalid(index, contentID, "The operation's request line %q is malformed.", line)
	}
	mimeHeader, err := tp.ReadMIMEHeader()
	if err != nil && !errors.Is(err, io.EOF) {
		return Operation{}, operationInvalid(index, contentID, "The operation's headers are malformed: %v.", err)
	}
	header := http.Header(mimeHeader)
	if contentID == "" {
		contentID = strings.TrimSpace(header.Get("Content-Id"))
	}
	body, _ := io.ReadAll(br)
	if allowedMethod(method) == "" {
		return Operation{}, operationInvalid(index, contentID, "The verb %q is not allowed in a batch.", method)
	}
	resolved, apiErr := operation.EffectiveMethod(method, header)
	if apiErr != nil {
		return Operation{}, &OperationError{Index: index, ContentID: contentID, Err: apiErr}
	}
	target = strings.TrimSpace(target)
	u, apiErr := referenceTarget(target, header.Get("Host"))
	if apiErr != nil {
		return Operation{}, &OperationError{Index: index, ContentID: contentID, Err: apiErr}
	}
	if apiErr := checkBodyFraming(index, header, body); apiErr != nil {
		return Operation{}, apiErr
	}
	return Operation{Index: index, Method: resolved, URL: u, Header: header, Body: trimBody(body), ContentID: contentID}, nil
}

func referenceTarget(target, host string) (*url.URL, *apierr.Error) {
	if strings.HasPrefix(target, "/") {
		u, err := url.ParseRequestURI(target)
		if err != nil {
			return nil, apierr.Newf(apierr.InvalidInput, "The operation's URL %q is malformed.", target)
		}
		u.Host = strings.TrimSpace(host)
		return u, nil
	}
	u, err := url.ParseRequestURI(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, apierr.Newf(apierr.InvalidInput, "The operation's URL %q must be an absolute http or https URL.", target)
	}
	return u, nil
}

func referenceHeaderBlock(content []byte) (textproto.MIMEHeader, []byte, error) {
	if len(content) == 0 {
		return nil, nil, errNoHeaderBlock
	}
	br := bufio.NewReader(bytes.NewReader(content))
	header, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, errNoHeaderBlock
		}
		return nil, nil, err
	}
	rest, _ := io.ReadAll(br)
	return header, rest, nil
}

func referenceSplit(body []byte, boundary string, limit int) ([][]byte, error) {
	spans, err := splitMultipart(nil, string(body), boundary, limit)
	parts := make([][]byte, len(spans))
	for i, s := range spans {
		parts[i] = body[s.start:s.end]
	}
	return parts, err
}

// sameResult reports how the two parses of one input differ, or "".
func sameResult(got, want *Request, gotErr, wantErr error) string {
	if (gotErr == nil) != (wantErr == nil) {
		return "error " + errString(gotErr) + ", reference error " + errString(wantErr)
	}
	if gotErr != nil {
		var g, w *OperationError
		if errors.As(gotErr, &g) != errors.As(wantErr, &w) {
			return "error kinds differ: " + gotErr.Error() + " / " + wantErr.Error()
		}
		if g != nil && (g.Index != w.Index || g.ContentID != w.ContentID) {
			return "operation errors differ: " + gotErr.Error() + " / " + wantErr.Error()
		}
		ga, _ := apierr.As(gotErr)
		wa, _ := apierr.As(wantErr)
		if ga.Code != wa.Code || ga.Text() != wa.Text() {
			return "errors differ: " + ga.Text() + " / " + wa.Text()
		}
		return ""
	}
	if got.IsQuery != want.IsQuery || got.BatchBoundary != want.BatchBoundary ||
		got.ChangesetBoundary != want.ChangesetBoundary || len(got.Operations) != len(want.Operations) {
		return "requests differ"
	}
	for i := range got.Operations {
		g, w := got.Operations[i], want.Operations[i]
		wantHeader := w.Header
		if len(wantHeader) == 0 {
			wantHeader = http.Header{}
		}
		switch {
		case g.Index != w.Index, g.Method != w.Method, g.ContentID != w.ContentID:
			return "operation fields differ"
		case !bytes.Equal(g.Body, w.Body) || (g.Body == nil) != (w.Body == nil):
			return "bodies differ"
		case !reflect.DeepEqual(*g.URL, *w.URL):
			return "URLs differ"
		case !reflect.DeepEqual(g.Header, wantHeader):
			return "headers differ"
		}
	}
	return ""
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// differentialSeeds are the fixtures and hand-written edge cases of header
// and URL syntax.
func differentialSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	files, err := filepath.Glob(filepath.Join("testdata", "*.request"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		seeds[filepath.Base(f)] = data
		seeds[filepath.Base(f)+" LF"] = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	}
	const part = "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n--changeset_c\r\nContent-Type: application/http\r\n\r\n"
	const end = "\r\n--changeset_c--\r\n--batch_b--\r\n"
	for name, request := range map[string]string{
		"folded header":            "PUT http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nIf-Match: a\r\n  b\r\n\tc\r\n\r\n{}",
		"folded blank":             "PUT http://h/a/t HTTP/1.1\r\nIf-Match: a\r\n   \r\nPrefer: x\r\n\r\n{}",
		"initial space":            "POST http://h/a/t HTTP/1.1\r\n Prefer: x\r\n\r\n{}",
		"long initial space":       "POST http://h/a/t HTTP/1.1\r\n " + strings.Repeat("x", 90) + "\r\n\r\n{}",
		"name with space":          "POST http://h/a/t HTTP/1.1\r\nPre fer: x\r\n\r\n{}",
		"space before colon":       "POST http://h/a/t HTTP/1.1\r\nPrefer : x\r\n\r\n{}",
		"empty name":               "POST http://h/a/t HTTP/1.1\r\n: x\r\n\r\n{}",
		"bad value byte":           "POST http://h/a/t HTTP/1.1\r\nPrefer: x\x01y\r\n\r\n{}",
		"lone CR":                  "POST http://h/a/t HTTP/1.1\r\nPrefer: x\ry\r\n\r\n{}",
		"lowercase names":          "post http://h/a/t HTTP/1.1\r\ncontent-type: a\r\nif-match: *\r\nx-ms-version: 1\r\ndataserviceversion: 3.0\r\n\r\n{}",
		"repeated header":          "DELETE http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nIf-Match: a\r\nif-match: b\r\n\r\n",
		"no header end":            "DELETE http://h/a/t(PartitionKey='p',RowKey='r') HTTP/1.1\r\nIf-Match: a",
		"trailing spaces at end":   "DELETE http://h/a/t HTTP/1.1\r\nIf-Match: a\r\n  ",
		"request line only":        "DELETE http://h/a/t HTTP/1.1",
		"blank lines first":        "\r\n \r\n\r\nPOST http://h/a/t HTTP/1.1\r\n\r\n{}",
		"tunnel":                   "POST http://h/a/t HTTP/1.1\r\nX-HTTP-Method: merge\r\n\r\n{}",
		"origin form":              "POST /a/t HTTP/1.1\r\nHost:  h:1 \r\n\r\n{}",
		"escaped path":             "PUT http://h/a/t(PartitionKey='p%20q',RowKey='r') HTTP/1.1\r\n\r\n{}",
		"upper-case scheme":        "POST HTTP://H/a/t HTTP/1.1\r\n\r\n{}",
		"user info":                "POST http://u@h/a/t HTTP/1.1\r\n\r\n{}",
		"IPv6":                     "POST http://[::1]:80/a/t HTTP/1.1\r\n\r\n{}",
		"empty port":               "POST http://h:/a/t HTTP/1.1\r\n\r\n{}",
		"empty query":              "POST http://h/a/t? HTTP/1.1\r\n\r\n{}",
		"two question marks":       "POST http://h/a/t?? HTTP/1.1\r\n\r\n{}",
		"fragment":                 "POST http://h/a/t#f?x=1 HTTP/1.1\r\n\r\n{}",
		"space in target":          "MERGE http://h/a/t(PartitionKey='p',RowKey='r s') HTTP/1.1\r\n\r\n{}",
		"no path":                  "POST http://h?x HTTP/1.1\r\n\r\n{}",
		"Content-ID inside":        "POST http://h/a/t HTTP/1.1\r\nContent-ID: 7\r\n\r\n{}",
		"Content-Length over body": "PUT http://h/a/t HTTP/1.1\r\nContent-Length: 999999\r\n\r\n{}",
		"Content-Length of body":   "PUT http://h/a/t HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}",
		"Transfer-Encoding":        "PUT http://h/a/t HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
		"non-ASCII header value":   "POST http://h/a/t HTTP/1.1\r\nPrefer: \xc3\xbc\r\n\r\n{}",
		"unicode space line first": "\xc2\x85\r\nPOST http://h/a/t HTTP/1.1\r\n\r\n{}",
	} {
		seeds[name] = []byte(part + request + end)
	}
	return seeds
}

func TestParseMatchesReference(t *testing.T) {
	t.Parallel()
	for name, body := range differentialSeeds(t) {
		t.Run(name, func(t *testing.T) {
			contentType := "multipart/mixed; boundary=batch_b"
			if i := bytes.Index(body, []byte("--batch_")); i >= 0 {
				end := bytes.IndexAny(body[i:], "\r\n")
				contentType = "multipart/mixed; boundary=" + string(body[i+2:i+end])
			}
			got, gotErr := ParseBytes(contentType, body)
			want, wantErr := referenceParse(contentType, body)
			if diff := sameResult(got, want, gotErr, wantErr); diff != "" {
				t.Fatal(diff)
			}
		})
	}
}

func FuzzParseMatchesReference(f *testing.F) {
	for _, body := range differentialSeeds(f) {
		f.Add(body)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		const contentType = "multipart/mixed; boundary=batch_b"
		got, gotErr := ParseBytes(contentType, body)
		if tooManyHeaderFields(gotErr) {
			t.Skip("past maxHeaderFields, which the reference does not bound")
		}
		want, wantErr := referenceParse(contentType, body)
		if diff := sameResult(got, want, gotErr, wantErr); diff != "" {
			t.Fatalf("%s\ngot  %+v %v\nwant %+v %v", diff, got, gotErr, want, wantErr)
		}
	})
}

// FuzzHeaderFields compares the header block parser with
// textproto.ReadMIMEHeader directly, which reaches inputs the multipart
// framing would cut short.
func FuzzHeaderFields(f *testing.F) {
	for _, s := range []string{
		"A: b\r\n\r\nrest", "a: b\nc:d\n\n", "A: b\r\n c\r\n\td\r\n\r\n", " A: b\r\n\r\n", "A b\r\n\r\n",
		"A : b\r\n\r\n", "A: b", "A: b\r\n  ", "x-ms-version: \r\n\r\n", "A: b\rc\r\n\r\n", ": b\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		fields, n, err := readHeaderFields(nil, nil, text)
		if err == errTooManyHeaderFields {
			t.Skip("past maxHeaderFields, which textproto does not bound")
		}
		br := bufio.NewReader(strings.NewReader(text))
		want, wantErr := textproto.NewReader(br).ReadMIMEHeader()
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("error %v, textproto %v", err, wantErr)
		}
		if err != nil && err != io.EOF {
			return
		}
		var s stringSlab
		got := s.toHeader(fields)
		if len(want) == 0 {
			want = textproto.MIMEHeader{}
		}
		if !reflect.DeepEqual(got, http.Header(want)) {
			t.Fatalf("headers %q, textproto %q", got, want)
		}
		rest, _ := io.ReadAll(br)
		if text[n:] != string(rest) {
			t.Fatalf("rest %q, textproto %q", text[n:], rest)
		}
	})
}

// FuzzHeaderFieldsReused is FuzzHeaderFields after a previous block, as
// the parser reads them (headerBlocks), so lines and keys checked for one
// block (previousField, previousKey) are reused on the next: the result
// must be what a first block gives.
func FuzzHeaderFieldsReused(f *testing.F) {
	f.Add("x-ms-version: 1\r\nContent-Type: a\r\n\r\n", "x-ms-version: 2\r\ncontent-type: b\r\nX-Ms-Version: 3\r\n\r\n")
	f.Add("a b: 1\r\nx: 2\r\n\r\n", "a b: 3\r\nX: 4\r\n\r\n")
	f.Add("A: b\r\n c\r\n\r\n", "A: b\r\n\r\n")
	f.Add("DataServiceVersion: 3.0\r\n\r\n", "x: 1\r\nDataServiceVersion: \r\n\r\n")
	f.Fuzz(func(t *testing.T, previous, text string) {
		var blocks headerBlocks
		blocks.read(previous)
		got, gotN, gotErr := blocks.read(text)
		want, wantN, wantErr := readHeaderFields(nil, nil, text)
		if gotN != wantN || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("reused: %d, %v; fresh: %d, %v", gotN, gotErr, wantN, wantErr)
		}
		if len(got) != len(want) || len(got) > 0 && !reflect.DeepEqual(got, want) {
			t.Fatalf("reused fields %q, fresh %q", got, want)
		}
	})
}

// FuzzSimpleURL: whatever parseSimpleURL accepts, url.ParseRequestURI
// parses to the same URL.
func FuzzSimpleURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:10002/devstoreaccount1/t?%24format=application%2Fjson%3Bodata%3Dminimalmetadata",
		"https://acct.table.core.windows.net/t(PartitionKey='p',RowKey='r')", "http://h/a!*()$&+,;=@:~_.-",
		"http://h:/a", "http://h/a?", "http://H/a?b?c", "http://h/a b", "http://h/%41",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		var u url.URL
		if !parseSimpleURL(&u, target) {
			return
		}
		want, err := url.ParseRequestURI(target)
		if err != nil {
			t.Fatalf("parseSimpleURL accepted %q, url.ParseRequestURI: %v", target, err)
		}
		if !reflect.DeepEqual(u, *want) {
			t.Fatalf("parseSimpleURL(%q) = %#v, url.ParseRequestURI %#v", target, u, *want)
		}
	})
}

// tooManyHeaderFields reports whether err from ParseBytes is the refusal
// of a header block past maxHeaderFields, a bound the reference parsers do
// not have. ParseBytes answers with an Azure error whose message quotes
// the parser's.
func tooManyHeaderFields(err error) bool {
	return err != nil && strings.Contains(err.Error(), errTooManyHeaderFields.Error())
}
