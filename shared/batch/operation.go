package batch

import (
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// OperationError is the failure of one operation of a changeset. Azure
// answers it with 202 Accepted and a single response part whose message
// starts with Index (see WriteFailure). It unwraps to Err.
type OperationError struct {
	// Index is the 0-based position of the failing operation.
	Index int
	// ContentID is the failing operation's Content-ID, echoed in the part.
	ContentID string
	// Err is the protocol error; its status becomes the part's status.
	Err *apierr.Error
}

func (e *OperationError) Error() string {
	return "batch operation " + strconv.Itoa(e.Index) + ": " + e.Err.Error()
}

// Unwrap returns the protocol error, so apierr.As finds it.
func (e *OperationError) Unwrap() error { return e.Err }

// parseOperation parses one changeset part into op: MIME headers, then the
// embedded HTTP request.
func (p *parser) parseOperation(op *Operation, index int, raw span) error {
	header, content, err := p.readHeaderBlock(raw)
	if err != nil {
		return operationInvalid(index, "", "The operation's MIME headers are malformed: %v.", err)
	}
	return p.parseOperationPart(op, index, header, content)
}

// parseOperationPart parses into op the embedded request of a part whose
// MIME headers are already read.
func (p *parser) parseOperationPart(op *Operation, index int, partHeader []headerField, content span) error {
	contentID := strings.TrimSpace(fieldValue(partHeader, "Content-Id"))
	if partType := fieldValue(partHeader, "Content-Type"); mediaTypeOf(partType) != "application/http" {
		return operationInvalid(index, contentID, "An operation's Content-Type must be application/http, not %q.", partType)
	}
	if cte := fieldValue(partHeader, "Content-Transfer-Encoding"); cte != "" && !strings.EqualFold(strings.TrimSpace(cte), "binary") {
		return operationInvalid(index, contentID, "An operation's Content-Transfer-Encoding must be binary, not %q.", cte)
	}

	text := p.text[content.start:content.end]
	line, pos, ok := requestLine(text)
	if !ok {
		return operationInvalid(index, contentID, "The operation has no request line.")
	}
	method, target, ok := splitRequestLine(line)
	if !ok {
		return operationInvalid(index, contentID, "The operation's request line %q is malformed.", line)
	}
	fields, n, err := p.requestHeaders.read(text[pos:])
	if err != nil && err != io.EOF {
		return operationInvalid(index, contentID, "The operation's headers are malformed: %v.", err)
	}
	if contentID == "" {
		// Legacy clients put Content-ID in the embedded request.
		contentID = strings.TrimSpace(fieldValue(fields, "Content-Id"))
	}
	bodyStart := content.start + pos + n

	verb := allowedMethod(method)
	if verb == "" {
		return operationInvalid(index, contentID, "The verb %q is not allowed in a batch.", method)
	}
	header := p.values.toHeader(fields)
	resolved, apiErr := operation.EffectiveMethod(verb, header)
	if apiErr != nil {
		return &OperationError{Index: index, ContentID: contentID, Err: apiErr}
	}
	target = strings.TrimSpace(target)
	u := &p.urls[index]
	host := fieldValue(fields, "Host")
	if prev := &p.lastTarget; prev.url != nil && prev.target == target && prev.host == host {
		// The operations of a changeset mostly share one target (every
		// insert names the table): parse it once.
		*u = *prev.url
	} else {
		if apiErr := parseTarget(u, target, host); apiErr != nil {
			return &OperationError{Index: index, ContentID: contentID, Err: apiErr}
		}
		*prev = parsedTarget{target: target, host: host, url: u}
	}
	body := p.data[bodyStart:content.end:content.end]
	if apiErr := checkBodyFraming(index, header, body); apiErr != nil {
		return apiErr
	}
	*op = Operation{
		Index:     index,
		Method:    resolved,
		URL:       u,
		Header:    header,
		Body:      trimBody(body),
		ContentID: contentID,
	}
	return nil
}

// checkBodyFraming refuses the whole batch when an operation's headers
// frame its body otherwise than the changeset does. The body is what lies
// between the operation's header block and the next delimiter; a
// Content-Length that names another length (a PUT saying 999999 over 19
// bytes), two that disagree, or a Transfer-Encoding leave it open what the
// client meant to send, and another parser on the way (a proxy, Azure)
// would read a different request than the one applied here. A length that
// counts the body without the whitespace around it is accepted, as that
// whitespace is tolerated anyway.
func checkBodyFraming(index int, header http.Header, body []byte) *apierr.Error {
	if len(header["Transfer-Encoding"]) > 0 {
		return invalidBatch("Operation %d sends a Transfer-Encoding; an operation's body is delimited by the changeset and may only declare a Content-Length.", index)
	}
	// Like Content-Length, Content-MD5 may count the body with or without
	// the whitespace around it.
	if err := CheckContentMD5(header, body); err != nil {
		if CheckContentMD5(header, trimBody(body)) != nil {
			err.Message = fmt.Sprintf("Operation %d: %s", index, err.Message)
			return err
		}
	}
	lengths := header["Content-Length"]
	if len(lengths) == 0 {
		return nil
	}
	declared := strings.TrimSpace(lengths[0])
	for _, v := range lengths[1:] {
		if strings.TrimSpace(v) != declared {
			return invalidBatch("Operation %d sends two different Content-Length headers.", index)
		}
	}
	n, err := strconv.ParseUint(declared, 10, 63)
	if err != nil {
		return invalidBatch("Operation %d has the Content-Length %q, which is not a length.", index, declared)
	}
	if n == uint64(len(body)) || n == uint64(len(trimBody(body))) {
		return nil
	}
	return invalidBatch("Operation %d declares a Content-Length of %d bytes, but its body is %d bytes.", index, n, len(body))
}

// CheckContentMD5 holds a body to the Content-MD5 header that came with it,
// when there is one: Shared Key signs that header, not the body, so
// without this check a body swapped on the way would still pass as
// signed. Azure answers a mismatch 400 Md5Mismatch, and a value that is
// not a base64 MD5 400 InvalidHeaderValue. It checks a request's own body
// and each batch operation's.
func CheckContentMD5(h http.Header, body []byte) *apierr.Error {
	values := h["Content-Md5"]
	if len(values) == 0 {
		return nil
	}
	want, err := base64.StdEncoding.DecodeString(values[0])
	if len(values) > 1 || err != nil || len(want) != md5.Size {
		return apierr.Newf(apierr.InvalidHeaderValue, "Content-MD5 %q is not one base64 MD5 hash.", values[0])
	}
	if got := md5.Sum(body); string(got[:]) != string(want) {
		return apierr.Newf(apierr.Md5Mismatch, "Content-MD5 is %s; the body's MD5 is %s.", values[0], base64.StdEncoding.EncodeToString(got[:]))
	}
	return nil
}

// requestLine returns the first non-empty line of text and the offset
// after it, or ok false if there is none. RFC 9112 §2.2 lets a server skip
// empty lines before the request line.
func requestLine(text string) (line string, next int, ok bool) {
	for next < len(text) {
		line, n := cutLine(text[next:])
		next += n
		if strings.TrimSpace(line) != "" {
			return line, next, true
		}
	}
	return "", next, false
}

// splitRequestLine splits "METHOD SP target SP HTTP/1.x". The target is
// everything between the first and the last space, so a target with a raw
// space (the REST reference's own MERGE sample has one) still parses.
func splitRequestLine(line string) (method, target string, ok bool) {
	first := strings.IndexByte(line, ' ')
	last := strings.LastIndexByte(line, ' ')
	if first <= 0 || last <= first+1 {
		return "", "", false
	}
	method, target, version := line[:first], line[first+1:last], line[last+1:]
	if version != "HTTP/1.1" && version != "HTTP/1.0" {
		return "", "", false
	}
	return method, target, true
}

// parseTarget parses the request target into u: an absolute http(s) URL,
// as every current SDK sends, or an origin-form path ("/t" or
// "/acct/t(PartitionKey='a',RowKey='b')") with or without a Host header.
// The legacy Python SDK (azure-storage-table, azure-cosmosdb-table) sends
// the origin form with no Host, and Azure answers it 202 with normal parts
// (azure-cosmos-table-python
// azure-cosmosdb-table/tests/recordings/test_table_batch.test_batch_insert.yaml),
// so a missing Host is not HostInformationNotPresent here: the resource is
// the path's last segment, and the account is the outer request's.
func parseTarget(u *url.URL, target, host string) *apierr.Error {
	if strings.HasPrefix(target, "/") {
		parsed, err := url.ParseRequestURI(target)
		if err != nil {
			return apierr.Newf(apierr.InvalidInput, "The operation's URL %q is malformed.", target)
		}
		*u = *parsed
		u.Host = strings.TrimSpace(host)
		return nil
	}
	if parseSimpleURL(u, target) {
		return nil
	}
	parsed, err := url.ParseRequestURI(target)
	if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
		return apierr.Newf(apierr.InvalidInput, "The operation's URL %q must be an absolute http or https URL.", target)
	}
	*u = *parsed
	return nil
}

// operationInvalid is an InvalidInput failure of one operation.
func operationInvalid(index int, contentID, format string, args ...any) *OperationError {
	return &OperationError{Index: index, ContentID: contentID, Err: apierr.Newf(apierr.InvalidInput, format, args...)}
}
