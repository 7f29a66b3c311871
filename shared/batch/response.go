package batch

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
)

// Wire constants of a batch response.
const (
	// StatusCode is the status of every batch response that reaches a
	// writer here: Azure answers 202 even when an operation fails.
	StatusCode = http.StatusAccepted
	// JSONContentType is the Content-Type Azure gives entity and error
	// bodies inside a batch response.
	JSONContentType = "application/json;odata=minimalmetadata;streaming=true;charset=utf-8"
	// DataServiceVersion3 is the DataServiceVersion of inserts, reads and
	// errors; DataServiceVersion1 that of updates, merges, upserts and
	// deletes (recorded Azure responses).
	DataServiceVersion3 = "3.0;"
	DataServiceVersion1 = "1.0;"
	// ReturnNoContent is the Preference-Applied value of an insert sent
	// with "Prefer: return-no-content".
	ReturnNoContent = "return-no-content"
)

// Boundaries are the ids of a response's two boundaries: the batch
// boundary is "batchresponse_" + Batch and the changeset boundary
// "changesetresponse_" + Changeset. Azure uses two random UUIDs.
type Boundaries struct {
	Batch     string
	Changeset string
}

// NewBoundaries returns two random UUID v4 ids, as Azure uses.
func NewBoundaries() (Boundaries, error) {
	batch, err := newUUID()
	if err != nil {
		return Boundaries{}, err
	}
	changeset, err := newUUID()
	if err != nil {
		return Boundaries{}, err
	}
	return Boundaries{Batch: batch, Changeset: changeset}, nil
}

// ContentType is the Content-Type of the response. The .NET SDK requires
// it to start with exactly "multipart/mixed; boundary=" and takes the rest
// as the boundary, so nothing may follow.
func (b Boundaries) ContentType() string {
	return "multipart/mixed; boundary=" + b.batchBoundary()
}

func (b Boundaries) batchBoundary() string     { return "batchresponse_" + b.Batch }
func (b Boundaries) changesetBoundary() string { return "changesetresponse_" + b.Changeset }

// validate checks that both boundaries are legal RFC 2046 boundaries.
func (b Boundaries) validate(needChangeset bool) error {
	if err := checkBoundary(b.batchBoundary(), b.Batch); err != nil {
		return err
	}
	if needChangeset {
		return checkBoundary(b.changesetBoundary(), b.Changeset)
	}
	return nil
}

func checkBoundary(boundary, id string) error {
	if id == "" {
		return errors.New("batch: empty boundary id")
	}
	if len(boundary) > maxBoundaryLength {
		return fmt.Errorf("batch: boundary %q is longer than 70 characters", boundary)
	}
	for _, c := range id {
		// RFC 2046 bcharsnospace, without the characters that would need
		// quoting in the Content-Type parameter the SDKs read unquoted.
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.ContainsRune("'()+_,-.", c)) {
			return fmt.Errorf("batch: boundary id %q has character %q", id, c)
		}
	}
	return nil
}

// Response is one operation's response part. The fields are the headers
// Azure writes; Write* puts them in Azure's order (see the package
// documentation). Empty fields are left out.
type Response struct {
	Status             int
	ContentID          string
	PreferenceApplied  string
	DataServiceVersion string
	ContentType        string
	Location           string
	DataServiceID      string
	ETag               string
	// Header holds any further headers (for example continuation tokens of
	// a query), written after the others in key order. It must not repeat
	// a header that has a field.
	Header http.Header
	Body   []byte
}

// InsertedNoContent is the part of an insert sent with "Prefer:
// return-no-content": 204 with Location and DataServiceId both naming the
// new entity.
func InsertedNoContent(location, etag string) Response {
	return Response{
		Status:             http.StatusNoContent,
		PreferenceApplied:  ReturnNoContent,
		DataServiceVersion: DataServiceVersion3,
		Location:           location,
		DataServiceID:      location,
		ETag:               etag,
	}
}

// Inserted is the part of an insert that returns the entity: 201 with the
// entity as body. Set PreferenceApplied if the client sent "Prefer:
// return-content".
func Inserted(location, etag, contentType string, body []byte) Response {
	return Response{
		Status:             http.StatusCreated,
		DataServiceVersion: DataServiceVersion3,
		ContentType:        contentType,
		Location:           location,
		ETag:               etag,
		Body:               body,
	}
}

// Updated is the part of an update, merge or either upsert: 204 with the
// new ETag.
func Updated(etag string) Response {
	return Response{Status: http.StatusNoContent, DataServiceVersion: DataServiceVersion1, ETag: etag}
}

// Deleted is the part of a delete: 204 without ETag.
func Deleted() Response {
	return Response{Status: http.StatusNoContent, DataServiceVersion: DataServiceVersion1}
}

// Retrieved is the part answering a lone GET: 200 with the entity or the
// page of entities. etag is empty for a query.
func Retrieved(etag, contentType string, body []byte) Response {
	return Response{
		Status:             http.StatusOK,
		DataServiceVersion: DataServiceVersion3,
		ContentType:        contentType,
		ETag:               etag,
		Body:               body,
	}
}

// fieldHeaders are the headers a Response has fields for, which Header
// must not repeat.
var fieldHeaders = map[string]bool{
	"Content-Id": true, "X-Content-Type-Options": true, "Cache-Control": true,
	"Preference-Applied": true, "Dataserviceversion": true, "Content-Type": true,
	"Location": true, "Dataserviceid": true, "Etag": true,
}

// headerLine is one header of a part.
type headerLine struct{ name, value string }

// headerLines lists the part's headers in the order Azure writes them. The
// three layouts come from recorded Azure responses: errors, parts with a
// body (200 and 201), and parts without (204).
func (r *Response) headerLines() []headerLine {
	var lines []headerLine
	add := func(name, value string) {
		if value != "" {
			lines = append(lines, headerLine{name, value})
		}
	}
	switch {
	case r.Status >= 400:
		add("Content-ID", r.ContentID)
		add("X-Content-Type-Options", "nosniff")
		add("DataServiceVersion", r.DataServiceVersion)
		add("Content-Type", r.ContentType)
	case len(r.Body) > 0:
		add("DataServiceVersion", r.DataServiceVersion)
		add("Content-Type", r.ContentType)
		add("Content-ID", r.ContentID)
		add("X-Content-Type-Options", "nosniff")
		add("Cache-Control", "no-cache")
		add("Preference-Applied", r.PreferenceApplied)
		add("Location", r.Location)
		add("DataServiceId", r.DataServiceID)
		add("ETag", r.ETag)
	default:
		add("Content-ID", r.ContentID)
		add("X-Content-Type-Options", "nosniff")
		add("Cache-Control", "no-cache")
		add("Preference-Applied", r.PreferenceApplied)
		add("DataServiceVersion", r.DataServiceVersion)
		add("Location", r.Location)
		add("DataServiceId", r.DataServiceID)
		add("ETag", r.ETag)
	}
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			lines = append(lines, headerLine{k, v})
		}
	}
	return lines
}

// validate rejects a part that would corrupt the multipart body: an
// unknown status, a header with a line break, or a header that repeats a
// field.
func (r *Response) validate() error {
	if http.StatusText(r.Status) == "" || r.Status < 200 {
		return fmt.Errorf("batch: response status %d is not valid", r.Status)
	}
	for k := range r.Header {
		if fieldHeaders[textproto.CanonicalMIMEHeaderKey(k)] {
			return fmt.Errorf("batch: header %q must be set through its Response field", k)
		}
		if !isToken(k) {
			return fmt.Errorf("batch: header name %q is not valid", k)
		}
	}
	for _, line := range r.headerLines() {
		if strings.ContainsAny(line.value, "\r\n") {
			return fmt.Errorf("batch: header %s has a line break", line.name)
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token, as header names are.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// writePart writes one application/http part: its MIME headers, the status
// line, the headers, an empty line and the body. The line break before the
// next delimiter is the caller's.
func (r *Response) writePart(buf *bytes.Buffer) {
	buf.WriteString("Content-Type: application/http\r\n")
	buf.WriteString("Content-Transfer-Encoding: binary\r\n\r\n")
	buf.WriteString("HTTP/1.1 " + strconv.Itoa(r.Status) + " " + http.StatusText(r.Status) + "\r\n")
	for _, line := range r.headerLines() {
		buf.WriteString(line.name + ": " + line.value + "\r\n")
	}
	buf.WriteString("\r\n")
	buf.Write(r.Body)
}

// WriteResponse writes the response of a changeset whose operations all
// succeeded: one part per operation, in order. Send it with status
// StatusCode and Content-Type b.ContentType(). Failures go through
// WriteFailure.
func WriteResponse(w io.Writer, b Boundaries, parts []Response) error {
	if len(parts) == 0 {
		return errors.New("batch: a changeset response needs at least one part")
	}
	for i := range parts {
		if parts[i].Status >= 400 {
			return fmt.Errorf("batch: part %d has status %d; write failures with WriteFailure", i, parts[i].Status)
		}
	}
	return writeChangeset(w, b, parts)
}

// writeChangeset writes the batch part that wraps a changeset response.
func writeChangeset(w io.Writer, b Boundaries, parts []Response) error {
	if err := b.validate(true); err != nil {
		return err
	}
	for i := range parts {
		if err := parts[i].validate(); err != nil {
			return fmt.Errorf("part %d: %w", i, err)
		}
	}
	var buf bytes.Buffer
	buf.WriteString("--" + b.batchBoundary() + "\r\n")
	buf.WriteString("Content-Type: multipart/mixed; boundary=" + b.changesetBoundary() + "\r\n\r\n")
	for i := range parts {
		buf.WriteString("--" + b.changesetBoundary() + "\r\n")
		parts[i].writePart(&buf)
		buf.WriteString("\r\n")
	}
	buf.WriteString("--" + b.changesetBoundary() + "--\r\n")
	buf.WriteString("--" + b.batchBoundary() + "--\r\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteQueryResponse writes the response of a query batch: the single part
// sits directly in the batch, with no changeset around it (REST reference,
// "Sample Response for Queries"). The part may be a FailureResponse.
func WriteQueryResponse(w io.Writer, b Boundaries, part Response) error {
	if err := b.validate(false); err != nil {
		return err
	}
	if err := part.validate(); err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString("--" + b.batchBoundary() + "\r\n")
	part.writePart(&buf)
	buf.WriteString("\r\n--" + b.batchBoundary() + "--\r\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// newUUID returns a random RFC 9562 version 4 UUID.
func newUUID() (string, error) {
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", err
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}
