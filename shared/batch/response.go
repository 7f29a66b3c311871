package batch

import (
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

func (b Boundaries) batchBoundary() string { return "batchresponse_" + b.Batch }

// validate checks that both boundaries are legal RFC 2046 boundaries.
func (b Boundaries) validate(needChangeset bool) error {
	if err := checkBoundary("batchresponse_", b.Batch); err != nil {
		return err
	}
	if needChangeset {
		return checkBoundary("changesetresponse_", b.Changeset)
	}
	return nil
}

// checkBoundary checks the boundary prefix + id.
func checkBoundary(prefix, id string) error {
	if id == "" {
		return errors.New("batch: empty boundary id")
	}
	if len(prefix)+len(id) > maxBoundaryLength {
		return fmt.Errorf("batch: boundary %q is longer than 70 characters", prefix+id)
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

// appendHeaders appends the part's headers in the order Azure writes
// them. The three layouts come from recorded Azure responses: errors, parts
// with a body (200 and 201), and parts without (204).
func (r *Response) appendHeaders(dst []byte) []byte {
	switch {
	case r.Status >= 400:
		dst = appendHeader(dst, "Content-ID", r.ContentID)
		dst = appendHeader(dst, "X-Content-Type-Options", "nosniff")
		dst = appendHeader(dst, "DataServiceVersion", r.DataServiceVersion)
		dst = appendHeader(dst, "Content-Type", r.ContentType)
	case len(r.Body) > 0:
		dst = appendHeader(dst, "DataServiceVersion", r.DataServiceVersion)
		dst = appendHeader(dst, "Content-Type", r.ContentType)
		dst = appendHeader(dst, "Content-ID", r.ContentID)
		dst = appendHeader(dst, "X-Content-Type-Options", "nosniff")
		dst = appendHeader(dst, "Cache-Control", "no-cache")
		dst = appendHeader(dst, "Preference-Applied", r.PreferenceApplied)
		dst = appendHeader(dst, "Location", r.Location)
		dst = appendHeader(dst, "DataServiceId", r.DataServiceID)
		dst = appendHeader(dst, "ETag", r.ETag)
	default:
		dst = appendHeader(dst, "Content-ID", r.ContentID)
		dst = appendHeader(dst, "X-Content-Type-Options", "nosniff")
		dst = appendHeader(dst, "Cache-Control", "no-cache")
		dst = appendHeader(dst, "Preference-Applied", r.PreferenceApplied)
		dst = appendHeader(dst, "DataServiceVersion", r.DataServiceVersion)
		dst = appendHeader(dst, "Location", r.Location)
		dst = appendHeader(dst, "DataServiceId", r.DataServiceID)
		dst = appendHeader(dst, "ETag", r.ETag)
	}
	if len(r.Header) == 0 {
		return dst
	}
	keys := make([]string, 0, len(r.Header))
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			dst = append(dst, k...)
			dst = append(dst, ": "...)
			dst = append(dst, v...)
			dst = append(dst, "\r\n"...)
		}
	}
	return dst
}

// appendHeader appends "name: value" and a CRLF, or nothing for an empty
// value.
func appendHeader(dst []byte, name, value string) []byte {
	if value == "" {
		return dst
	}
	dst = append(dst, name...)
	dst = append(dst, ": "...)
	dst = append(dst, value...)
	return append(dst, "\r\n"...)
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
	for _, field := range [...]struct{ name, value string }{
		{"Content-ID", r.ContentID}, {"Preference-Applied", r.PreferenceApplied},
		{"DataServiceVersion", r.DataServiceVersion}, {"Content-Type", r.ContentType},
		{"Location", r.Location}, {"DataServiceId", r.DataServiceID}, {"ETag", r.ETag},
	} {
		if hasLineBreak(field.value) {
			return fmt.Errorf("batch: header %s has a line break", field.name)
		}
	}
	for k, values := range r.Header {
		for _, v := range values {
			if hasLineBreak(v) {
				return fmt.Errorf("batch: header %s has a line break", k)
			}
		}
	}
	return nil
}

// hasLineBreak reports whether s holds a CR or an LF. It runs over 7
// fields of every part, and two IndexByte scans (vectorized) are cheaper
// than strings.ContainsAny's byte loop.
func hasLineBreak(s string) bool {
	return strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\r') >= 0
}

// isToken reports whether s is an RFC 9110 token, as header names are.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !validHeaderFieldByte(s[i]) {
			return false
		}
	}
	return true
}

// partOverhead is what a part's framing and fixed headers take beyond its
// variable fields, rounded up, for sizing the response buffer.
const partOverhead = 320

// sizeHint estimates the bytes appendPart writes, so a response is
// appended into one buffer without growing it.
func (r *Response) sizeHint() int {
	n := partOverhead + len(r.ContentID) + len(r.PreferenceApplied) + len(r.DataServiceVersion) +
		len(r.ContentType) + len(r.Location) + len(r.DataServiceID) + len(r.ETag) + len(r.Body)
	for k, values := range r.Header {
		for _, v := range values {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// appendPart appends one application/http part: its MIME headers, the
// status line, the headers, an empty line and the body. The line break
// before the next delimiter is the caller's.
func (r *Response) appendPart(dst []byte) []byte {
	dst = append(dst, "Content-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(r.Status), 10)
	dst = append(dst, ' ')
	dst = append(dst, http.StatusText(r.Status)...)
	dst = append(dst, "\r\n"...)
	dst = r.appendHeaders(dst)
	dst = append(dst, "\r\n"...)
	return append(dst, r.Body...)
}

// WriteResponse writes the response of a changeset whose operations all
// succeeded: one part per operation, in order. Send it with status
// StatusCode and Content-Type b.ContentType(). Failures go through
// WriteFailure.
func WriteResponse(w io.Writer, b Boundaries, parts []Response) error {
	buf, err := AppendResponse(nil, b, parts)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// AppendResponse is WriteResponse appending to dst: it returns the
// response body in one buffer, sized up front, for a caller that sends
// bytes rather than writing to a stream. On error dst is returned as it
// was.
func AppendResponse(dst []byte, b Boundaries, parts []Response) ([]byte, error) {
	for i := range parts {
		if parts[i].Status >= 400 {
			return dst, fmt.Errorf("batch: part %d has status %d; write failures with WriteFailure", i, parts[i].Status)
		}
	}
	return appendChangeset(dst, b, parts)
}

// appendChangeset appends the batch part that wraps a changeset response.
func appendChangeset(dst []byte, b Boundaries, parts []Response) ([]byte, error) {
	if err := b.validate(true); err != nil {
		return dst, err
	}
	size := 4*len("changesetresponse_--\r\n") + 2*len(b.Batch) + 2*len(b.Changeset) + len("Content-Type: multipart/mixed; boundary=\r\n\r\n")
	for i := range parts {
		if err := parts[i].validate(); err != nil {
			return dst, fmt.Errorf("part %d: %w", i, err)
		}
		size += parts[i].sizeHint() + len("--changesetresponse_\r\n\r\n") + len(b.Changeset)
	}
	dst = slices.Grow(dst, size)
	dst = appendDelimiter(dst, "batchresponse_", b.Batch, "\r\n")
	dst = append(dst, "Content-Type: multipart/mixed; boundary=changesetresponse_"...)
	dst = append(dst, b.Changeset...)
	dst = append(dst, "\r\n\r\n"...)
	for i := range parts {
		dst = appendDelimiter(dst, "changesetresponse_", b.Changeset, "\r\n")
		dst = parts[i].appendPart(dst)
		dst = append(dst, "\r\n"...)
	}
	dst = appendDelimiter(dst, "changesetresponse_", b.Changeset, "--\r\n")
	return appendDelimiter(dst, "batchresponse_", b.Batch, "--\r\n"), nil
}

// appendDelimiter appends "--" + prefix + id + suffix.
func appendDelimiter(dst []byte, prefix, id, suffix string) []byte {
	dst = append(dst, "--"...)
	dst = append(dst, prefix...)
	dst = append(dst, id...)
	return append(dst, suffix...)
}

// WriteQueryResponse writes the response of a query batch: the single part
// sits directly in the batch, with no changeset around it (REST reference,
// "Sample Response for Queries"). The part may be a FailureResponse.
func WriteQueryResponse(w io.Writer, b Boundaries, part Response) error {
	buf, err := AppendQueryResponse(nil, b, part)
	if err != nil {
		return err
	}
	_, err = w.Write(buf)
	return err
}

// AppendQueryResponse is WriteQueryResponse appending to dst. On error dst
// is returned as it was.
func AppendQueryResponse(dst []byte, b Boundaries, part Response) ([]byte, error) {
	if err := b.validate(false); err != nil {
		return dst, err
	}
	if err := part.validate(); err != nil {
		return dst, err
	}
	dst = slices.Grow(dst, part.sizeHint()+2*len("--batchresponse_--\r\n")+2*len(b.Batch))
	dst = appendDelimiter(dst, "batchresponse_", b.Batch, "\r\n")
	dst = part.appendPart(dst)
	dst = append(dst, "\r\n"...)
	return appendDelimiter(dst, "batchresponse_", b.Batch, "--\r\n"), nil
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
