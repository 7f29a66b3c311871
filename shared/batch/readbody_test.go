package batch_test

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
)

// onlyReader hides a reader's Len method, as a request body does.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func TestReadBody(t *testing.T) {
	t.Parallel()
	body := changesetBody(op(insertRequest))
	big := strings.Repeat("x", 200<<10) // longer than the first unknown-size buffer
	tests := []struct {
		name     string
		reader   io.Reader
		size     int64
		want     string
		wantCode apierr.Code
	}{
		{name: "declared size", reader: onlyReader{strings.NewReader(body)}, size: int64(len(body)), want: body},
		{name: "unknown size", reader: onlyReader{strings.NewReader(body)}, size: -1, want: body},
		{name: "size from Len", reader: strings.NewReader(body), size: -1, want: body},
		{name: "unknown size grows", reader: onlyReader{strings.NewReader(big)}, size: -1, want: big},
		{name: "one byte at a time", reader: iotest.OneByteReader(strings.NewReader(body)), size: int64(len(body)), want: body},
		{name: "declared too small", reader: onlyReader{strings.NewReader(big)}, size: 10, want: big},
		{name: "declared too large", reader: onlyReader{strings.NewReader(body)}, size: int64(len(body)) + 1000, want: body},
		{name: "empty", reader: strings.NewReader(""), size: 0, want: ""},
		{name: "declared over the limit", reader: strings.NewReader(body), size: batch.MaxBodyBytes + 1, wantCode: apierr.RequestBodyTooLarge},
		{name: "read over the limit", reader: onlyReader{io.LimitReader(zeros{}, batch.MaxBodyBytes+10)}, size: -1, wantCode: apierr.RequestBodyTooLarge},
		{name: "lying size over the limit", reader: onlyReader{io.LimitReader(zeros{}, batch.MaxBodyBytes+10)}, size: 100, wantCode: apierr.RequestBodyTooLarge},
		{name: "exactly the limit", reader: onlyReader{io.LimitReader(zeros{}, batch.MaxBodyBytes)}, size: -1, want: strings.Repeat("\x00", batch.MaxBodyBytes)},
		{name: "MaxBytesReader", reader: http.MaxBytesReader(nil, io.NopCloser(strings.NewReader(body)), 10), size: -1, wantCode: apierr.RequestBodyTooLarge},
		{name: "read error", reader: iotest.ErrReader(errors.New("connection reset")), size: -1, wantCode: apierr.InvalidInput},
		{name: "error after data", reader: io.MultiReader(strings.NewReader(body), iotest.ErrReader(errors.New("reset"))), size: int64(len(body)), wantCode: apierr.InvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := batch.ReadBody(tt.reader, tt.size)
			if tt.wantCode != "" {
				apiErr, ok := apierr.As(err)
				if !ok || apiErr.Code != tt.wantCode || got != nil {
					t.Fatalf("ReadBody = %d bytes, %v; want %s", len(got), err, tt.wantCode)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("ReadBody = %d bytes, %v; want %d bytes", len(got), err, len(tt.want))
			}
		})
	}
}

// TestReadBodyInto: a buffer whose capacity takes the declared body is
// reused whatever it held, a smaller one is not touched, and the body read
// is the same either way.
func TestReadBodyInto(t *testing.T) {
	t.Parallel()
	body := changesetBody(op(insertRequest))
	for _, tt := range []struct {
		name   string
		buf    []byte
		size   int64
		reused bool
	}{
		{"nil buffer", nil, int64(len(body)), false},
		{"large enough, holding old data", append(make([]byte, 0, len(body)+1), "stale stale stale"...), int64(len(body)), true},
		{"too small", make([]byte, 3, len(body)-1), int64(len(body)), false},
		{"unknown size, small buffer", make([]byte, 0, 100), -1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := append([]byte(nil), tt.buf...)
			got, err := batch.ReadBodyInto(tt.buf, onlyReader{strings.NewReader(body)}, tt.size)
			if err != nil || string(got) != body {
				t.Fatalf("ReadBodyInto = %q, %v", got, err)
			}
			reused := cap(tt.buf) > 0 && &got[:1][0] == &tt.buf[:1][0]
			if reused != tt.reused {
				t.Errorf("buffer reused = %v, want %v", reused, tt.reused)
			}
			if !tt.reused && !bytes.Equal(tt.buf, before) {
				t.Errorf("a buffer too small was changed: %q, was %q", tt.buf, before)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestParseBytesMatchesParse: both entry points give the same request, and
// ParseBytes' bodies alias its input as documented.
func TestParseBytesMatchesParse(t *testing.T) {
	t.Parallel()
	contentType, body := sdkBatch100()
	fromReader, err := batch.Parse(contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	fromBytes, err := batch.ParseBytes(contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromBytes.Operations) != 100 || len(fromReader.Operations) != 100 {
		t.Fatalf("%d and %d operations, want 100", len(fromBytes.Operations), len(fromReader.Operations))
	}
	for i := range fromBytes.Operations {
		if a, b := describe(fromReader.Operations[i]), describe(fromBytes.Operations[i]); a != b {
			t.Fatalf("operation %d:\nParse      %s\nParseBytes %s", i, a, b)
		}
	}
	first := fromBytes.Operations[0].Body
	if i := bytes.Index(body, first); i < 0 || &body[i] != &first[0] {
		t.Error("ParseBytes copied the body; its documentation says the bodies alias the input")
	}
	if _, err := batch.ParseBytes(contentType, make([]byte, batch.MaxBodyBytes+1)); !isCode(err, apierr.RequestBodyTooLarge) {
		t.Errorf("ParseBytes of an over-long body: %v, want RequestBodyTooLarge", err)
	}
}

func isCode(err error, code apierr.Code) bool {
	apiErr, ok := apierr.As(err)
	return ok && apiErr.Code == code
}

// TestAppendMatchesWrite: the Append forms write the same bytes after
// whatever dst holds, and leave dst alone on error.
func TestAppendMatchesWrite(t *testing.T) {
	t.Parallel()
	parts := benchResponses()
	prefix := []byte("prefix")
	var written bytes.Buffer
	if err := batch.WriteResponse(&written, benchBoundaries, parts); err != nil {
		t.Fatal(err)
	}
	appended, err := batch.AppendResponse(bytes.Clone(prefix), benchBoundaries, parts)
	if err != nil || string(appended) != "prefix"+written.String() {
		t.Fatalf("AppendResponse differs from WriteResponse (err %v)", err)
	}

	failure := &batch.OperationError{Index: 2, ContentID: "3", Err: apierr.New(apierr.EntityAlreadyExists)}
	at := time.Date(2024, 12, 23, 9, 20, 10, 0, time.UTC)
	written.Reset()
	if err := batch.WriteFailure(&written, benchBoundaries, failure, "rid", at); err != nil {
		t.Fatal(err)
	}
	appended, err = batch.AppendFailure(bytes.Clone(prefix), benchBoundaries, failure, "rid", at)
	if err != nil || string(appended) != "prefix"+written.String() {
		t.Fatalf("AppendFailure differs from WriteFailure (err %v)", err)
	}

	written.Reset()
	part := batch.Retrieved(`W/"x"`, batch.JSONContentType, []byte(`{"a":1}`))
	if err := batch.WriteQueryResponse(&written, benchBoundaries, part); err != nil {
		t.Fatal(err)
	}
	appended, err = batch.AppendQueryResponse(bytes.Clone(prefix), benchBoundaries, part)
	if err != nil || string(appended) != "prefix"+written.String() {
		t.Fatalf("AppendQueryResponse differs from WriteQueryResponse (err %v)", err)
	}

	bad := []batch.Response{batch.Updated("a\r\nInjected: 1")}
	if out, err := batch.AppendResponse(prefix, benchBoundaries, bad); err == nil || string(out) != "prefix" {
		t.Errorf("AppendResponse of a bad part = %q, %v; want prefix and an error", out, err)
	}
	if out, err := batch.AppendResponse(prefix, batch.Boundaries{}, parts); err == nil || string(out) != "prefix" {
		t.Errorf("AppendResponse without boundaries = %q, %v; want prefix and an error", out, err)
	}
	if out, err := batch.AppendFailure(prefix, benchBoundaries, nil, "rid", at); err == nil || string(out) != "prefix" {
		t.Errorf("AppendFailure(nil) = %q, %v; want prefix and an error", out, err)
	}
}
