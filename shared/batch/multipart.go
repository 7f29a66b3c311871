package batch

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"mime"
	"net/textproto"
	"strings"
)

// errNoOpeningBoundary and its siblings describe malformed multipart bodies.
// Parse turns them into InvalidInput with the text as detail.
var (
	errNoOpeningBoundary = errors.New("the body has no opening boundary")
	errUnterminatedPart  = errors.New("a part is not terminated by a boundary")
	errNoHeaderBlock     = errors.New("a part has no header block")
)

// maxBoundaryLength is RFC 2046's limit on a boundary (1 to 70 characters).
const maxBoundaryLength = 70

// multipartBoundary returns the boundary of a multipart/mixed Content-Type.
// Quoted and bare values are both accepted (mime.ParseMediaType).
func multipartBoundary(contentType string) (string, error) {
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", err
	}
	if mediaType != "multipart/mixed" {
		return "", errors.New("the content type is " + mediaType + ", not multipart/mixed")
	}
	boundary := params["boundary"]
	if boundary == "" {
		return "", errors.New("the content type has no boundary")
	}
	if len(boundary) > maxBoundaryLength {
		return "", errors.New("the boundary is longer than 70 characters")
	}
	return boundary, nil
}

// splitMultipart cuts body into the contents of its parts, as delimited by
// boundary (RFC 2046 §5.1.1). A delimiter is "--" + boundary at the start
// of a line, followed by optional spaces or tabs and a line break. The line
// break before a delimiter belongs to the delimiter, not to the part.
//
// It tolerates what real clients send: bare LF line endings, a preamble,
// an epilogue, and a last delimiter that lacks the closing "--" but ends
// the body (Azure's own sample request ends that way).
//
// It stops after limit+1 parts: callers only need to know that there are
// more than limit, and a 4 MiB body of empty parts should not cost more.
func splitMultipart(body []byte, boundary string, limit int) ([][]byte, error) {
	delimiter := []byte("--" + boundary)
	pos := findDelimiter(body, delimiter, 0)
	if pos < 0 {
		return nil, errNoOpeningBoundary
	}
	var parts [][]byte
	for {
		after := body[pos+len(delimiter):]
		if bytes.HasPrefix(after, []byte("--")) {
			return parts, nil // close delimiter; the epilogue is ignored
		}
		rest := bytes.TrimLeft(after, " \t")
		if len(bytes.Trim(rest, " \t\r\n")) == 0 {
			// The body ends with a delimiter that lacks "--".
			return parts, nil
		}
		start := len(body) - len(rest) + lineBreakLength(rest)
		next := findDelimiter(body, delimiter, start)
		if next < 0 {
			return nil, errUnterminatedPart
		}
		parts = append(parts, body[start:trimLineBreak(body, start, next)])
		if len(parts) > limit {
			return parts, nil
		}
		pos = next
	}
}

// findDelimiter returns the index of the first delimiter in body at or
// after from, or -1. A match counts only at the start of a line and only
// if the rest of its line is "--", padding, or nothing.
func findDelimiter(body, delimiter []byte, from int) int {
	for from <= len(body) {
		i := bytes.Index(body[from:], delimiter)
		if i < 0 {
			return -1
		}
		p := from + i
		if (p == 0 || body[p-1] == '\n') && delimiterLineEnds(body[p+len(delimiter):]) {
			return p
		}
		from = p + 1
	}
	return -1
}

// delimiterLineEnds reports whether what follows a boundary string makes it
// a delimiter: "--" (close), or transport padding then a line break or the
// end of the body.
func delimiterLineEnds(after []byte) bool {
	if bytes.HasPrefix(after, []byte("--")) {
		return true
	}
	after = bytes.TrimLeft(after, " \t")
	return len(after) == 0 || after[0] == '\n' || bytes.HasPrefix(after, []byte("\r\n"))
}

// lineBreakLength is the length of the line break that b starts with.
func lineBreakLength(b []byte) int {
	switch {
	case bytes.HasPrefix(b, []byte("\r\n")):
		return 2
	case bytes.HasPrefix(b, []byte("\n")):
		return 1
	default:
		return 0
	}
}

// trimLineBreak returns the end of the part that runs from start to the
// delimiter at next, without the line break that precedes the delimiter.
func trimLineBreak(body []byte, start, next int) int {
	end := next
	if end > start && body[end-1] == '\n' {
		end--
		if end > start && body[end-1] == '\r' {
			end--
		}
	}
	return end
}

// readHeaderBlock reads a MIME header block (CRLF or bare LF lines, ended by
// an empty line) from the front of content and returns the headers and the
// bytes after the block.
func readHeaderBlock(content []byte) (textproto.MIMEHeader, []byte, error) {
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
	rest, err := io.ReadAll(br)
	if err != nil {
		return nil, nil, err
	}
	return header, rest, nil
}

// mediaTypeOf returns the lower-case media type of a Content-Type value, or
// "" if it does not parse.
func mediaTypeOf(contentType string) string {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return strings.ToLower(mediaType)
}
