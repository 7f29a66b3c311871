package batch

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
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

// parseOperation parses one changeset part: MIME headers, then the embedded
// HTTP request.
func parseOperation(index int, raw []byte) (Operation, error) {
	header, content, err := readHeaderBlock(raw)
	if err != nil {
		return Operation{}, operationInvalid(index, "", "The operation's MIME headers are malformed: %v.", err)
	}
	return parseOperationPart(index, header, content)
}

// parseOperationPart parses the embedded request of a part whose MIME
// headers are already read.
func parseOperationPart(index int, partHeader textproto.MIMEHeader, content []byte) (Operation, error) {
	contentID := strings.TrimSpace(partHeader.Get("Content-Id"))
	if mt := mediaTypeOf(partHeader.Get("Content-Type")); mt != "application/http" {
		return Operation{}, operationInvalid(index, contentID, "An operation's Content-Type must be application/http, not %q.", partHeader.Get("Content-Type"))
	}
	if cte := partHeader.Get("Content-Transfer-Encoding"); cte != "" && !strings.EqualFold(strings.TrimSpace(cte), "binary") {
		return Operation{}, operationInvalid(index, contentID, "An operation's Content-Transfer-Encoding must be binary, not %q.", cte)
	}

	br := bufio.NewReader(bytes.NewReader(content))
	tp := textproto.NewReader(br)
	line, err := readRequestLine(tp)
	if err != nil {
		return Operation{}, operationInvalid(index, contentID, "The operation has no request line.")
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
	if header == nil {
		header = http.Header{}
	}
	if contentID == "" {
		// Legacy clients put Content-ID in the embedded request.
		contentID = strings.TrimSpace(header.Get("Content-Id"))
	}
	body, err := io.ReadAll(br)
	if err != nil {
		return Operation{}, operationInvalid(index, contentID, "The operation's body cannot be read: %v.", err)
	}

	if !methodAllowed[method] {
		return Operation{}, operationInvalid(index, contentID, "The verb %q is not allowed in a batch.", method)
	}
	resolved, apiErr := resolveMethod(method, header)
	if apiErr != nil {
		return Operation{}, &OperationError{Index: index, ContentID: contentID, Err: apiErr}
	}
	target = strings.TrimSpace(target)
	u, apiErr := parseTarget(target, header.Get("Host"))
	if apiErr != nil {
		return Operation{}, &OperationError{Index: index, ContentID: contentID, Err: apiErr}
	}
	return Operation{
		Index:     index,
		Method:    resolved,
		URL:       u,
		RawPath:   rawPathOf(target),
		Header:    header,
		Body:      trimBody(body),
		ContentID: contentID,
	}, nil
}

// readRequestLine returns the first non-empty line. RFC 9112 §2.2 lets a
// server skip empty lines before the request line.
func readRequestLine(tp *textproto.Reader) (string, error) {
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(line) != "" {
			return line, nil
		}
	}
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

// parseTarget parses the request target: an absolute http(s) URL, as every
// SDK sends, or an origin-form path with the operation's Host header.
// Azure's HostInformationNotPresent covers a path without a Host.
func parseTarget(target, host string) (*url.URL, *apierr.Error) {
	if strings.HasPrefix(target, "/") {
		if strings.TrimSpace(host) == "" {
			return nil, apierr.New(apierr.HostInformationNotPresent)
		}
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

// rawPathOf returns the path of a request target exactly as sent: without
// scheme, authority and query.
func rawPathOf(target string) string {
	rest := target
	if !strings.HasPrefix(rest, "/") {
		if i := strings.Index(rest, "://"); i >= 0 {
			rest = rest[i+len("://"):]
		}
		slash := strings.IndexAny(rest, "/?")
		if slash < 0 || rest[slash] == '?' {
			return "/"
		}
		rest = rest[slash:]
	}
	path, _, _ := strings.Cut(rest, "?")
	return path
}

// operationInvalid is an InvalidInput failure of one operation.
func operationInvalid(index int, contentID, format string, args ...any) *OperationError {
	return &OperationError{Index: index, ContentID: contentID, Err: apierr.Newf(apierr.InvalidInput, format, args...)}
}
