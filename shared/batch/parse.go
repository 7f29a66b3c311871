package batch

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
)

// MaxBodyBytes is the largest $batch body ("Performing entity group
// transactions": "its total payload may be no more than 4 MiB in size").
// The other limit, at most 100 operations, is the data model's
// (model.MaxBatchOperations), since the service applies it to transactions
// that never were a $batch body too.
const MaxBodyBytes = 4 << 20

// Request is a parsed $batch request.
type Request struct {
	// Operations are the changeset's operations in request order, or the
	// single GET of a query batch.
	Operations []Operation
	// IsQuery is set when the batch holds one GET directly, not in a
	// changeset. Its response is written with WriteQueryResponse.
	IsQuery bool
	// BatchBoundary and ChangesetBoundary are the boundaries the client
	// chose, for logs. ChangesetBoundary is empty for a query batch.
	BatchBoundary     string
	ChangesetBoundary string
}

// Operation is one embedded HTTP request.
type Operation struct {
	// Index is the 0-based position in the changeset. Failure messages
	// start with it.
	Index int
	// Method is the verb after X-HTTP-Method is resolved: GET, POST, PUT,
	// PATCH, MERGE or DELETE.
	Method string
	// URL is the request target. For an origin-form target it carries the
	// operation's Host header as URL.Host and no scheme.
	URL *url.URL
	// Header holds the embedded request's headers with canonical keys:
	// If-Match, Prefer, Content-Type, DataServiceVersion, Accept, ...
	Header http.Header
	// Body is the JSON body with surrounding whitespace removed, or empty.
	Body []byte
	// ContentID is the operation's Content-ID (MIME part header, else the
	// embedded request header), or "" if it had none. Responses echo it.
	ContentID string
}

// Fail returns err as the failure of this operation, ready for
// WriteFailure.
func (op *Operation) Fail(err *apierr.Error) *OperationError {
	return &OperationError{Index: op.Index, ContentID: op.ContentID, Err: err}
}

// Parse reads a $batch request body of the given Content-Type. It reads at
// most MaxBodyBytes+1 bytes from body. Errors are a 4xx *apierr.Error for
// the whole request or an *OperationError for one operation; see the
// package documentation.
func Parse(contentType string, body io.Reader) (*Request, error) {
	data, err := ReadBody(body, -1)
	if err != nil {
		return nil, err
	}
	return ParseBytes(contentType, data)
}

// ReadBody reads a whole $batch request body into one buffer. size is the
// length the request declares (Content-Length), or -1 if unknown; with it
// the body is read without growing the buffer. A body over MaxBodyBytes,
// whether declared or read, is 413 RequestBodyTooLarge, as is the
// *http.MaxBytesError of an http.MaxBytesReader; a read past its deadline
// (os.ErrDeadlineExceeded) is 500 OperationTimedOut; another read error is
// 400 InvalidInput.
func ReadBody(body io.Reader, size int64) ([]byte, error) {
	return ReadBodyInto(nil, body, size)
}

// ReadBodyInto is ReadBody reusing buf, whatever it holds, when its
// capacity takes the declared body, for a caller that recycles buffers.
func ReadBodyInto(buf []byte, body io.Reader, size int64) ([]byte, error) {
	if size > MaxBodyBytes {
		return nil, apierr.New(apierr.RequestBodyTooLarge)
	}
	if size < 0 {
		if l, ok := body.(interface{ Len() int }); ok {
			size = int64(l.Len())
		}
	}
	// One byte more than expected, so that reading the end of the body
	// does not grow the buffer and a body longer than declared is seen.
	capacity := int64(unknownSizeBuffer)
	if size >= 0 {
		capacity = min(size, MaxBodyBytes) + 1
	}
	data := buf[:0]
	if int64(cap(data)) < capacity {
		data = make([]byte, 0, capacity)
	}
	for {
		if len(data) == cap(data) {
			// Double rather than append's 1.25 for large slices: a body
			// longer than its hint is rare, and few copies matter more
			// than a tight fit.
			data = slices.Grow(data, min(len(data), MaxBodyBytes+1-len(data)))
		}
		n, err := body.Read(data[len(data):min(cap(data), MaxBodyBytes+1)])
		data = data[:len(data)+n]
		if len(data) > MaxBodyBytes {
			return nil, apierr.New(apierr.RequestBodyTooLarge)
		}
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			// The HTTP layer may cap the body with http.MaxBytesReader; its
			// error means the same as our own limit.
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				return nil, apierr.Wrap(apierr.RequestBodyTooLarge, err)
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				// The server's body deadline passed: Azure answers a
				// client too slow to send with 500 OperationTimedOut.
				return nil, &apierr.Error{Code: apierr.RequestTimeout, Err: err,
					Detail: "The request body did not arrive within the time the server allows."}
			}
			return nil, apierr.Wrap(apierr.InvalidInput, fmt.Errorf("batch: reading body: %w", err))
		}
	}
}

// unknownSizeBuffer is the first buffer for a body of unknown length: a
// changeset of 100 typical entities is 50 to 100 KiB.
const unknownSizeBuffer = 64 << 10

// ParseBytes is Parse on a body already read (see ReadBody). The
// operations' Body slices alias body, so body must not change while the
// request is in use. Everything else the Request holds is copied.
func ParseBytes(contentType string, body []byte) (*Request, error) {
	if len(body) > MaxBodyBytes {
		return nil, apierr.New(apierr.RequestBodyTooLarge)
	}
	boundary, err := multipartBoundary(contentType)
	if err != nil {
		return nil, invalidBatch("The batch Content-Type is not valid: %v.", err)
	}
	// One copy of the body as a string: header values, URLs and
	// Content-IDs are substrings of it instead of a copy each.
	p := &parser{data: body, text: string(body)}
	var spans [2]span
	batchParts, err := splitMultipart(spans[:0], p.text, boundary, 1)
	if err != nil {
		return nil, invalidBatch("The batch body is malformed: %v.", err)
	}
	if len(batchParts) == 0 {
		return nil, invalidBatch("The batch contains no parts.")
	}
	if len(batchParts) > 1 {
		// Azure processes the first changeset and rejects the others with
		// 400 parts. No SDK sends more than one part; we reject the batch
		// as a whole rather than guess the shape of those parts.
		return nil, invalidBatch("The batch must contain exactly one changeset or one query, not more than one part.")
	}
	header, content, err := p.readHeaderBlock(batchParts[0])
	if err != nil {
		return nil, invalidBatch("The batch part is malformed: %v.", err)
	}
	req := &Request{BatchBoundary: boundary}
	partType := fieldValue(header, "Content-Type")
	switch mediaTypeOf(partType) {
	case "multipart/mixed":
		err = p.parseChangeset(req, partType, content)
	case "application/http":
		err = p.parseQuery(req, header, content)
	default:
		err = invalidBatch("The batch part must be a changeset (multipart/mixed) or a query (application/http), not %q.", partType)
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

// parser holds one request body, as bytes and as text, and the buffers
// its operations share.
type parser struct {
	data []byte
	text string
	// partHeaders reads the MIME headers of the parts.
	partHeaders headerBlocks
	// requestHeaders reads the embedded requests' headers, which then
	// become an http.Header.
	requestHeaders headerBlocks
	values         stringSlab
	urls           []url.URL
	// lastTarget is the last request target parsed, with its Host header
	// and its URL, for the next operation that sends the same.
	lastTarget parsedTarget
}

// parsedTarget is a request target and what parseTarget made of it; url
// is nil until a target has been parsed.
type parsedTarget struct {
	target, host string
	url          *url.URL
}

// readHeaderBlock reads the MIME header block at the front of part and
// returns its fields (valid until the next call) and the rest of the
// part. A part without a complete header block is errNoHeaderBlock.
func (p *parser) readHeaderBlock(part span) ([]headerField, span, error) {
	if part.start == part.end {
		return nil, span{}, errNoHeaderBlock
	}
	fields, n, err := p.partHeaders.read(p.text[part.start:part.end])
	if err != nil {
		if err == io.EOF {
			return nil, span{}, errNoHeaderBlock
		}
		return nil, span{}, err
	}
	return fields, span{part.start + n, part.end}, nil
}

// parseChangeset fills req.Operations from a changeset part.
func (p *parser) parseChangeset(req *Request, contentType string, content span) error {
	boundary, err := multipartBoundary(contentType)
	if err != nil {
		return invalidBatch("The changeset Content-Type is not valid: %v.", err)
	}
	req.ChangesetBoundary = boundary
	var spans [model.MaxBatchOperations + 1]span
	opParts, err := splitMultipart(spans[:0], p.text[content.start:content.end], boundary, model.MaxBatchOperations)
	if err != nil {
		return invalidBatch("The changeset is malformed: %v.", err)
	}
	for i := range opParts {
		opParts[i].start += content.start
		opParts[i].end += content.start
	}
	if len(opParts) == 0 {
		// Azure answers a changeset without operations 202 with an empty
		// changeset response (found replaying the legacy Python SDK's
		// recordings), so it parses to a request of no operations.
		return nil
	}
	// Counted before any operation is parsed, so the answer is Azure's
	// documented one whatever the operations hold.
	if err := model.ValidateBatchSize(len(opParts)); err != nil {
		tooMany, _ := apierr.As(err)
		return &OperationError{Index: 0, ContentID: p.mimeContentID(opParts[0]), Err: tooMany}
	}
	req.Operations = make([]Operation, len(opParts))
	p.urls = make([]url.URL, len(opParts))
	for i, raw := range opParts {
		op := &req.Operations[i]
		if err := p.parseOperation(op, i, raw); err != nil {
			return err
		}
		if op.Method == http.MethodGet {
			// OData: a changeset holds only changes; a query must be
			// "submitted singly in the batch".
			return op.Fail(apierr.Newf(apierr.InvalidInput, "A query (GET) is not allowed inside a changeset."))
		}
	}
	return nil
}

// parseQuery fills req from a batch whose only part is an application/http
// request. Only a GET may stand there. Its errors reject the whole batch:
// there is no changeset to report them in.
func (p *parser) parseQuery(req *Request, header []headerField, content span) error {
	p.urls = make([]url.URL, 1)
	ops := make([]Operation, 1)
	if err := p.parseOperationPart(&ops[0], 0, header, content); err != nil {
		if oe, ok := err.(*OperationError); ok {
			return oe.Err
		}
		return err
	}
	if ops[0].Method != http.MethodGet {
		return invalidBatch("Only a GET may appear outside a changeset, not %s.", ops[0].Method)
	}
	req.IsQuery = true
	req.Operations = ops
	return nil
}

// invalidBatch is the whole-request InvalidInput error, with a detail that
// names the problem.
func invalidBatch(format string, args ...any) *apierr.Error {
	return apierr.Newf(apierr.InvalidInput, format, args...)
}

// mimeContentID returns the Content-ID MIME header of a part, or "" if the
// part has none or its headers do not parse.
func (p *parser) mimeContentID(part span) string {
	header, _, err := p.readHeaderBlock(part)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(fieldValue(header, "Content-Id"))
}

// trimBody removes the whitespace JSON ignores. Only ASCII whitespace: JSON
// does not treat U+0085 or U+00A0 as insignificant.
func trimBody(body []byte) []byte {
	for len(body) > 0 && isJSONSpace(body[0]) {
		body = body[1:]
	}
	for len(body) > 0 && isJSONSpace(body[len(body)-1]) {
		body = body[:len(body)-1]
	}
	if len(body) == 0 {
		return nil
	}
	return body
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// allowedMethod returns the verb if an embedded request may use it, or "".
func allowedMethod(method string) string {
	switch method {
	case http.MethodGet:
		return http.MethodGet
	case http.MethodPost:
		return http.MethodPost
	case http.MethodPut:
		return http.MethodPut
	case http.MethodPatch:
		return http.MethodPatch
	case "MERGE":
		return "MERGE"
	case http.MethodDelete:
		return http.MethodDelete
	}
	return ""
}
