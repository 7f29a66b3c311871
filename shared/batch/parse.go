package batch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// Limits of an entity group transaction ("Performing entity group
// transactions": at most 100 operations and 4 MiB of payload).
const (
	MaxOperations = 100
	MaxBodyBytes  = 4 << 20
)

// tooManyOperationsMessage is Azure's message for a changeset over 100
// operations. Azure reports it inside a 202 response at index 0, as
// "0:The batch request operation exceeds ...".
const tooManyOperationsMessage = "The batch request operation exceeds the maximum 100 changes per change set."

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
	// RawPath is the path exactly as sent, percent-encoding intact, as a
	// key parser and SharedKey-style comparisons need it.
	RawPath string
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
	data, err := io.ReadAll(io.LimitReader(body, MaxBodyBytes+1))
	if err != nil {
		// The HTTP layer may cap the body with http.MaxBytesReader; its
		// error means the same as our own limit.
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apierr.Wrap(apierr.RequestBodyTooLarge, err)
		}
		return nil, apierr.Wrap(apierr.InvalidInput, fmt.Errorf("batch: reading body: %w", err))
	}
	if len(data) > MaxBodyBytes {
		return nil, apierr.New(apierr.RequestBodyTooLarge)
	}
	boundary, err := multipartBoundary(contentType)
	if err != nil {
		return nil, invalidBatch("The batch Content-Type is not valid: %v.", err)
	}
	batchParts, err := splitMultipart(data, boundary, 1)
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
	header, content, err := readHeaderBlock(batchParts[0])
	if err != nil {
		return nil, invalidBatch("The batch part is malformed: %v.", err)
	}
	req := &Request{BatchBoundary: boundary}
	switch mediaTypeOf(header.Get("Content-Type")) {
	case "multipart/mixed":
		err = req.parseChangeset(header.Get("Content-Type"), content)
	case "application/http":
		err = req.parseQuery(header, content)
	default:
		err = invalidBatch("The batch part must be a changeset (multipart/mixed) or a query (application/http), not %q.", header.Get("Content-Type"))
	}
	if err != nil {
		return nil, err
	}
	return req, nil
}

// parseChangeset fills req.Operations from a changeset part.
func (req *Request) parseChangeset(contentType string, content []byte) error {
	boundary, err := multipartBoundary(contentType)
	if err != nil {
		return invalidBatch("The changeset Content-Type is not valid: %v.", err)
	}
	req.ChangesetBoundary = boundary
	opParts, err := splitMultipart(content, boundary, MaxOperations)
	if err != nil {
		return invalidBatch("The changeset is malformed: %v.", err)
	}
	if len(opParts) == 0 {
		return invalidBatch("The changeset contains no operations.")
	}
	// Counted before any operation is parsed, so the answer is Azure's
	// documented one whatever the operations hold.
	if len(opParts) > MaxOperations {
		return &OperationError{
			Index:     0,
			ContentID: mimeContentID(opParts[0]),
			Err:       &apierr.Error{Code: apierr.InvalidInput, Message: tooManyOperationsMessage},
		}
	}
	req.Operations = make([]Operation, 0, len(opParts))
	for i, raw := range opParts {
		op, err := parseOperation(i, raw)
		if err != nil {
			return err
		}
		if op.Method == http.MethodGet {
			// OData: a changeset holds only changes; a query must be
			// "submitted singly in the batch".
			return op.Fail(apierr.Newf(apierr.InvalidInput, "A query (GET) is not allowed inside a changeset."))
		}
		req.Operations = append(req.Operations, op)
	}
	return nil
}

// parseQuery fills req from a batch whose only part is an application/http
// request. Only a GET may stand there. Its errors reject the whole batch:
// there is no changeset to report them in.
func (req *Request) parseQuery(header textproto.MIMEHeader, content []byte) error {
	op, err := parseOperationPart(0, header, content)
	if err != nil {
		if oe, ok := err.(*OperationError); ok {
			return oe.Err
		}
		return err
	}
	if op.Method != http.MethodGet {
		return invalidBatch("Only a GET may appear outside a changeset, not %s.", op.Method)
	}
	req.IsQuery = true
	req.Operations = []Operation{op}
	return nil
}

// invalidBatch is the whole-request InvalidInput error, with a detail that
// names the problem.
func invalidBatch(format string, args ...any) *apierr.Error {
	return apierr.Newf(apierr.InvalidInput, format, args...)
}

// mimeContentID returns the Content-ID MIME header of a part, or "" if the
// part has none or its headers do not parse.
func mimeContentID(part []byte) string {
	header, _, err := readHeaderBlock(part)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(header.Get("Content-Id"))
}

// trimBody removes the whitespace JSON ignores. Only ASCII whitespace: JSON
// does not treat U+0085 or U+00A0 as insignificant.
func trimBody(body []byte) []byte {
	body = bytes.Trim(body, " \t\r\n")
	if len(body) == 0 {
		return nil
	}
	return body
}

// methodAllowed lists the verbs an embedded request may use.
var methodAllowed = map[string]bool{
	http.MethodGet:    true,
	http.MethodPost:   true,
	http.MethodPut:    true,
	http.MethodPatch:  true,
	"MERGE":           true,
	http.MethodDelete: true,
}

// tunneledMethods are the X-HTTP-Method values a POST may carry.
var tunneledMethods = map[string]bool{
	"MERGE":           true,
	http.MethodPatch:  true,
	http.MethodPut:    true,
	http.MethodDelete: true,
}

// resolveMethod applies X-HTTP-Method: only on POST, once, with a verb from
// tunneledMethods (Azure's XMethodNotUsingPost, XMethodIncorrectCount and
// XMethodIncorrectValue).
func resolveMethod(method string, header http.Header) (string, *apierr.Error) {
	values := header.Values("X-Http-Method")
	if len(values) == 0 {
		return method, nil
	}
	if len(values) > 1 {
		return "", apierr.New(apierr.XMethodIncorrectCount)
	}
	if method != http.MethodPost {
		return "", apierr.New(apierr.XMethodNotUsingPost)
	}
	tunneled := strings.ToUpper(strings.TrimSpace(values[0]))
	if !tunneledMethods[tunneled] {
		return "", apierr.New(apierr.XMethodIncorrectValue)
	}
	return tunneled, nil
}
