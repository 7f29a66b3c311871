package batch

import (
	"errors"
	"mime"
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

// span is a part of the request body, as offsets into it: the parser
// keeps offsets so that a part's bytes (an operation's Body) and its text
// (header values, the URL) come from one copy of the body each.
type span struct{ start, end int }

// splitMultipart cuts body into the contents of its parts, as delimited by
// boundary (RFC 2046 §5.1.1), and appends their spans to parts. A
// delimiter is "--" + boundary at the start of a line, followed by
// optional spaces or tabs and a line break. The line break before a
// delimiter belongs to the delimiter, not to the part.
//
// It tolerates what real clients send: bare LF line endings, a preamble,
// an epilogue, and a last delimiter that lacks the closing "--" but ends
// the body (Azure's own sample request ends that way).
//
// It stops after limit+1 parts: callers only need to know that there are
// more than limit, and a 4 MiB body of empty parts should not cost more.
func splitMultipart(parts []span, body string, boundary string, limit int) ([]span, error) {
	search := newDelimiterSearch(boundary)
	delimiter := search.delimiter()
	pos := findDelimiter(body, search, 0)
	if pos < 0 {
		return parts, errNoOpeningBoundary
	}
	found := 0
	for {
		after := body[pos+len(delimiter):]
		if strings.HasPrefix(after, "--") {
			return parts, nil // close delimiter; the epilogue is ignored
		}
		rest := trimLeftSpaceTab(after)
		if isBlank(rest) {
			// The body ends with a delimiter that lacks "--".
			return parts, nil
		}
		start := len(body) - len(rest) + lineBreakLength(rest)
		next := findDelimiter(body, search, start)
		if next < 0 {
			return parts, errUnterminatedPart
		}
		parts = append(parts, span{start, trimLineBreak(body, start, next)})
		found++
		if found > limit {
			return parts, nil
		}
		pos = next
	}
}

// isBlank reports whether s holds only spaces, tabs and line breaks.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n':
		default:
			return false
		}
	}
	return true
}

// findDelimiter returns the index of the first delimiter in body at or
// after from, or -1. A match counts only at the start of a line and only
// if the rest of its line is "--", padding, or nothing.
func findDelimiter(body string, search *delimiterSearch, from int) int {
	delimiter := search.delimiter()
	if from == 0 && strings.HasPrefix(body, delimiter) && delimiterLineEnds(body[len(delimiter):]) {
		return 0
	}
	// Past the start of the body a delimiter follows a line break, so
	// the line break is searched for with it; it may sit just before from.
	for from = max(from, 1); from <= len(body); {
		i := search.index(body, from-1)
		if i < 0 {
			return -1
		}
		p := i + 1
		if delimiterLineEnds(body[p+len(delimiter):]) {
			return p
		}
		from = p + 1
	}
	return -1
}

// delimiterSearch finds "\n--" + boundary with Horspool's algorithm: it
// compares the last byte of the window and moves by how far that byte is
// from the end of the pattern, so most of a changeset is skipped over
// rather than looked at. strings.Index stops at every occurrence of the
// pattern's first byte, which, '\n' or '-', a changeset is full of.
type delimiterSearch struct {
	pattern string
	// shift is how far the window moves when its last byte is c, capped
	// at 255 (a shorter move is never wrong).
	shift [256]uint8
}

func newDelimiterSearch(boundary string) *delimiterSearch {
	s := &delimiterSearch{pattern: "\n--" + boundary}
	n := len(s.pattern)
	for c := range s.shift {
		s.shift[c] = uint8(min(n, 255))
	}
	for j := 0; j < n-1; j++ {
		s.shift[s.pattern[j]] = uint8(min(n-1-j, 255))
	}
	return s
}

// delimiter is "--" + boundary.
func (s *delimiterSearch) delimiter() string { return s.pattern[1:] }

// index returns the index of the first occurrence of the pattern in body
// at or after from, or -1.
func (s *delimiterSearch) index(body string, from int) int {
	n := len(s.pattern)
	last := s.pattern[n-1]
	for i := from; i+n <= len(body); {
		c := body[i+n-1]
		if c == last && body[i:i+n] == s.pattern {
			return i
		}
		i += int(s.shift[c])
	}
	return -1
}

// delimiterLineEnds reports whether what follows a boundary string makes it
// a delimiter: "--" (close), or transport padding then a line break or the
// end of the body.
func delimiterLineEnds(after string) bool {
	if strings.HasPrefix(after, "--") {
		return true
	}
	after = trimLeftSpaceTab(after)
	return len(after) == 0 || after[0] == '\n' || strings.HasPrefix(after, "\r\n")
}

// lineBreakLength is the length of the line break that s starts with.
func lineBreakLength(s string) int {
	switch {
	case strings.HasPrefix(s, "\r\n"):
		return 2
	case strings.HasPrefix(s, "\n"):
		return 1
	default:
		return 0
	}
}

// trimLineBreak returns the end of the part that runs from start to the
// delimiter at next, without the line break that precedes the delimiter.
func trimLineBreak(body string, start, next int) int {
	end := next
	if end > start && body[end-1] == '\n' {
		end--
		if end > start && body[end-1] == '\r' {
			end--
		}
	}
	return end
}

// mediaTypeOf returns the lower-case media type of a Content-Type value, or
// "" if it does not parse.
func mediaTypeOf(contentType string) string {
	// Every operation part says exactly this; mime.ParseMediaType would
	// allocate a parameter map to tell us so.
	if contentType == "application/http" {
		return contentType
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return strings.ToLower(mediaType)
}
