package batch

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// The header parser below reads a MIME header block exactly as
// net/textproto's Reader.ReadMIMEHeader does (same accepted input, same
// canonical keys, same values, same errors), but from a string and without
// a bufio.Reader, a map or a string copy per header: a changeset of 100
// operations has 200 header blocks, and textproto allocates buffers for
// each. reference_internal_test.go checks the equivalence.
//
// The rules, from textproto:
//   - Lines end with LF or CRLF; a lone CR stays in the line.
//   - The block ends at the first empty line. Ending without one is
//     io.EOF, with the headers read so far.
//   - The first line must not start with a space or tab.
//   - A line that starts with a space or tab continues the previous
//     header (obsolete line folding, RFC 9112 §5.2): it is joined with a
//     single space.
//   - "Name: value": the name must be an RFC 9110 token, although a name
//     with spaces is kept as it is, not canonicalized (textproto accepts
//     it for go.dev/issue/34540); the value must be VCHAR, obs-text, space
//     or tab, and loses surrounding spaces and tabs.

// errMessageTooLarge is textproto's error for an over-long first line that
// starts with a space.
var errMessageTooLarge = errors.New("message too large")

// headerField is one header line of a block: the name as sent, its
// canonical key and the value. line is the raw line when the field took
// one line (no continuation), for previousField.
type headerField struct{ line, name, key, value string }

// headerBlocks reads a sequence of header blocks (the parts of a
// changeset, or their embedded requests), keeping the previous block's
// fields so that readHeaderFields can reuse what it already checked: the
// blocks of a changeset repeat most of their lines.
// The two arrays hold the blocks of usual size (an SDK's embedded request
// has about ten headers) without allocating.
type headerBlocks struct {
	current, previous []headerField
	arrays            [2][16]headerField
}

// read parses the header block at the front of text. The fields it returns
// are valid until the call after the next.
func (b *headerBlocks) read(text string) ([]headerField, int, error) {
	if b.current == nil {
		b.current, b.previous = b.arrays[0][:0], b.arrays[1][:0]
	}
	fields, n, err := readHeaderFields(b.previous[:0], b.current, text)
	b.previous, b.current = b.current, fields
	return fields, n, err
}

// maxHeaderFields bounds the fields of one header block. The SDKs send
// about ten per part and embedded request; without a bound a 4 MiB body of
// header lines would cost memory many times its size and, as fields are
// looked up among the fields before them, CPU quadratic in their number.
const maxHeaderFields = 100

// errTooManyHeaderFields refuses a header block past maxHeaderFields.
var errTooManyHeaderFields = textproto.ProtocolError("more than " + strconv.Itoa(maxHeaderFields) + " header fields")

// readHeaderFields parses the header block at the front of text, appends
// its fields to fields, and returns the offset in text just past the block.
// A block without its terminating empty line returns io.EOF with the
// fields read so far and len(text); a block of more than maxHeaderFields
// fields is malformed. previous is an earlier block's fields,
// as readHeaderFields returned them (or nil): a line found at the same
// position there is not checked again. fields must not share previous's
// backing array.
func readHeaderFields(fields, previous []headerField, text string) ([]headerField, int, error) {
	start := len(fields)
	if len(text) > 0 && (text[0] == ' ' || text[0] == '\t') {
		line, _ := cutLine(text)
		if len(line) > 80 {
			return fields, 0, errMessageTooLarge
		}
		return fields, 0, textproto.ProtocolError(fmt.Sprintf("malformed MIME header initial line: %q", line))
	}
	pos := 0
	for {
		if pos >= len(text) {
			return fields, len(text), io.EOF
		}
		line, next := cutLine(text[pos:])
		pos += next
		if line == "" {
			return fields, pos, nil
		}
		if len(fields)-start == maxHeaderFields {
			return fields, pos, errTooManyHeaderFields
		}
		continued := pos < len(text) && (text[pos] == ' ' || text[pos] == '\t')
		if !continued {
			if f, ok := previousField(previous, len(fields)-start, line); ok {
				fields = append(fields, f)
				continue
			}
		}
		if strings.IndexByte(line, ':') < 0 {
			return fields, pos, textproto.ProtocolError(fmt.Sprintf("malformed MIME header: missing colon: %q", line))
		}
		kv := trimSpaceTab(line)
		if continued {
			kv, pos = joinContinuation(kv, text, pos)
		}
		k, v, _ := strings.Cut(kv, ":")
		key, ok := previousKey(previous, len(fields)-start, k)
		if !ok {
			key, ok = canonicalHeaderKey(k)
		}
		if !ok {
			return fields, pos, textproto.ProtocolError(fmt.Sprintf("malformed MIME header line: %q", kv))
		}
		if !validHeaderValue(v) {
			// textproto canonicalizes the name in place before it checks
			// the value, so its message shows the canonical name.
			return fields, pos, textproto.ProtocolError(fmt.Sprintf("malformed MIME header line: %q", key+kv[len(k):]))
		}
		f := headerField{name: k, key: key, value: trimLeftSpaceTab(v)}
		if !continued {
			f.line = line
		}
		fields = append(fields, f)
	}
}

// previousField returns previous[i] if it was read from the same one-line
// text: key and value are functions of the line, so they are that
// field's, and the operations of a changeset, which repeat most of their
// header lines, check each such line once rather than once per operation.
// previous holds only fields readHeaderFields accepted.
func previousField(previous []headerField, i int, line string) (headerField, bool) {
	if i < len(previous) && previous[i].line == line && line != "" {
		return previous[i], true
	}
	return headerField{}, false
}

// previousKey is previousField for a line that differs but names the same
// header (Content-Length: 397, then 398): it returns the canonical key of
// name if previous[i] had the same name, so each spelling is canonicalized
// once per changeset rather than once per operation. previous holds only
// fields readHeaderFields accepted, so the key is the one
// canonicalHeaderKey gives name.
func previousKey(previous []headerField, i int, name string) (string, bool) {
	if i < len(previous) && previous[i].name == name && name != "" {
		return previous[i].key, true
	}
	return "", false
}

// joinContinuation appends the continuation lines that start at text[pos]
// to kv, each after a single space, and returns the joined line and the
// offset after the last continuation line. Whitespace-only continuations
// and one cut short by the end of text leave the trailing space, as
// textproto does.
func joinContinuation(kv, text string, pos int) (string, int) {
	buf := []byte(kv)
	for pos < len(text) && (text[pos] == ' ' || text[pos] == '\t') {
		for pos < len(text) && (text[pos] == ' ' || text[pos] == '\t') {
			pos++
		}
		buf = append(buf, ' ')
		if pos >= len(text) {
			break
		}
		line, next := cutLine(text[pos:])
		pos += next
		buf = append(buf, trimSpaceTab(line)...)
	}
	return string(buf), pos
}

// cutLine returns the first line of s without its LF or CRLF, and the
// length of the line with its line break. The last line may lack a line
// break, in which case any CR it ends with stays.
func cutLine(s string) (line string, next int) {
	i := strings.IndexByte(s, '\n')
	if i < 0 {
		return s, len(s)
	}
	line = s[:i]
	if i > 0 && s[i-1] == '\r' {
		line = s[:i-1]
	}
	return line, i + 1
}

// trimSpaceTab removes leading and trailing spaces and tabs, and nothing
// else (textproto's trim).
func trimSpaceTab(s string) string {
	i, j := 0, len(s)
	for i < j && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	for j > i && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	return s[i:j]
}

// trimLeftSpaceTab removes leading spaces and tabs.
func trimLeftSpaceTab(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return s[i:]
}

// canonicalHeaderKey is textproto's canonicalMIMEHeaderKey: the canonical
// form of a token ("content-id" becomes "Content-Id"), a name holding a
// space unchanged, and ok false for an empty name or any other byte. It
// allocates only for a name that is neither canonical already nor one of
// the headers batch requests carry.
func canonicalHeaderKey(k string) (string, bool) {
	if k == "" {
		return "", false
	}
	canonical, hasSpace := true, false
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !validHeaderFieldByte(c) {
			if c != ' ' {
				return "", false
			}
			hasSpace = true
			continue
		}
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			canonical = false
		}
		upper = c == '-'
	}
	if hasSpace || canonical {
		return k, true
	}
	var small [64]byte
	buf := small[:0]
	if len(k) > len(small) {
		buf = make([]byte, 0, len(k))
	}
	upper = true
	for i := 0; i < len(k); i++ {
		c := k[i]
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
		upper = c == '-'
	}
	if known, ok := knownHeaders[string(buf)]; ok {
		return known, true
	}
	return string(buf), true
}

// knownHeaders interns the canonical names of the headers the SDKs put in
// batch parts and embedded requests whose usual spelling is not canonical
// ("DataServiceVersion", "x-ms-version", "Content-ID", "If-Match" in lower
// case, ...), so that canonicalizing them does not allocate.
var knownHeaders = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{
		"Accept", "Accept-Charset", "Content-Id", "Content-Length", "Content-Transfer-Encoding",
		"Content-Type", "Dataserviceversion", "Maxdataserviceversion", "Etag", "Host", "If-Match",
		"Prefer", "User-Agent", "X-Http-Method", "X-Ms-Client-Request-Id", "X-Ms-Date", "X-Ms-Version",
		"Authorization", "Date",
	} {
		m[k] = k
	}
	return m
}()

// validHeaderFieldByte reports whether c may appear in a header name: an
// RFC 9110 tchar.
func validHeaderFieldByte(c byte) bool {
	return headerByteClass[c]&classToken != 0
}

// validHeaderValue reports whether every byte of v may appear in a header
// value: VCHAR, obs-text, space and tab (RFC 9110 field-content).
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if headerByteClass[v[i]]&classValue == 0 {
			return false
		}
	}
	return true
}

const (
	classToken = 1 << iota
	classValue
)

var headerByteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z',
			c < 0x80 && strings.IndexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0:
			t[c] |= classToken
		}
		if c == ' ' || c == '\t' || (0x21 <= c && c <= 0x7e) || c >= 0x80 {
			t[c] |= classValue
		}
	}
	return t
}()

// fieldValue returns the first value of the canonical key in fields, as
// http.Header.Get would.
func fieldValue(fields []headerField, key string) string {
	for i := range fields {
		if fields[i].key == key {
			return fields[i].value
		}
	}
	return ""
}

// stringSlab hands out one-element []string backings for header values
// from a shared array, so a request's headers cost a few allocations
// rather than one per header.
type stringSlab struct{ free []string }

func (s *stringSlab) one(v string) []string {
	if len(s.free) == 0 {
		s.free = make([]string, 128)
	}
	out := s.free[:1:1]
	s.free = s.free[1:]
	out[0] = v
	return out
}

// toHeader builds the http.Header of fields, values in order. A key seen
// before is found among the few fields already added rather than by a map
// lookup, so each field costs one map assignment.
func (s *stringSlab) toHeader(fields []headerField) http.Header {
	h := make(http.Header, len(fields))
	for i, f := range fields {
		if hasKey(fields[:i], f.key) {
			h[f.key] = append(h[f.key], f.value)
		} else {
			h[f.key] = s.one(f.value)
		}
	}
	return h
}

// hasKey reports whether a field of fields has the key.
func hasKey(fields []headerField, key string) bool {
	for i := range fields {
		if fields[i].key == key {
			return true
		}
	}
	return false
}
