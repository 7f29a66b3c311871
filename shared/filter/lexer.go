package filter

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

type tokenKind uint8

const (
	tokEOF tokenKind = iota
	tokLParen
	tokRParen
	// tokIdent is any identifier: a property name or a keyword (and, or,
	// not, eq..le, true, false, null). The parser decides by position.
	tokIdent
	// tokLiteral is a typed constant; its value is in token.lit.
	tokLiteral
)

type token struct {
	kind tokenKind
	pos  int    // byte offset of the token's first character
	text string // the token as written
	lit  edm.Value
}

// describe names a token for error messages.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "the end of the filter"
	case tokLParen:
		return "'('"
	case tokRParen:
		return "')'"
	case tokLiteral:
		return "literal " + t.text
	}
	return "'" + t.text + "'"
}

// lexer splits a filter into tokens, one at a time. It knows the literal
// syntax (including the typed prefixes and number suffixes) but no grammar.
type lexer struct {
	src string
	pos int
}

func (l *lexer) skipSpace() {
	for l.pos < len(l.src) {
		r, n := utf8.DecodeRuneInString(l.src[l.pos:])
		if !unicode.IsSpace(r) {
			return
		}
		l.pos += n
	}
}

// next returns the next token.
func (l *lexer) next() (token, error) {
	l.skipSpace()
	start := l.pos
	if start == len(l.src) {
		return token{kind: tokEOF, pos: start}, nil
	}
	c := l.src[start]
	switch {
	case c == '(':
		l.pos++
		return token{kind: tokLParen, pos: start, text: "("}, nil
	case c == ')':
		l.pos++
		return token{kind: tokRParen, pos: start, text: ")"}, nil
	case c == '\'':
		s, err := l.quoted()
		if err != nil {
			return token{}, err
		}
		return l.literal(start, edm.NewString(s)), nil
	case c == '-':
		return l.minus()
	case isDigit(c):
		return l.number(start)
	}
	r, _ := utf8.DecodeRuneInString(l.src[start:])
	if model.IsPropertyNameStart(r) {
		return l.identOrPrefixed(start)
	}
	return token{}, unexpectedChar(start, r)
}

func (l *lexer) literal(start int, v edm.Value) token {
	return token{kind: tokLiteral, pos: start, text: l.src[start:l.pos], lit: v}
}

func unexpectedChar(pos int, r rune) *Error {
	switch r {
	case '=', '<', '>', '!':
		return errorf(pos, "unexpected %q: the comparison operators are eq, ne, gt, ge, lt and le", r)
	case '&', '|':
		return errorf(pos, "unexpected %q: the logical operators are and, or and not", r)
	case '"':
		return errorf(pos, "unexpected '\"': string literals are enclosed in single quotes")
	case '+', '*', '%':
		return errorf(pos, "unexpected %q: arithmetic is not supported", r)
	case '/':
		return errorf(pos, "unexpected '/': property paths are not supported")
	}
	return errorf(pos, "unexpected character %q", r)
}

// quoted reads a single-quoted string at l.pos, where two quotes in a row
// stand for one, and returns its content.
func (l *lexer) quoted() (string, error) {
	start := l.pos
	l.pos++ // opening quote
	var b strings.Builder
	for {
		i := strings.IndexByte(l.src[l.pos:], '\'')
		if i < 0 {
			return "", errorf(start, "unterminated string literal")
		}
		chunk := l.src[l.pos : l.pos+i]
		l.pos += i + 1
		if l.pos < len(l.src) && l.src[l.pos] == '\'' {
			b.WriteString(chunk)
			b.WriteByte('\'')
			l.pos++
			continue
		}
		if b.Len() == 0 {
			return chunk, nil // no escapes: share the source
		}
		b.WriteString(chunk)
		return b.String(), nil
	}
}

// minus handles '-', which only starts a negative number or -INF: the
// Table service has no arithmetic.
func (l *lexer) minus() (token, error) {
	start := l.pos
	if start+1 < len(l.src) && isDigit(l.src[start+1]) {
		l.pos++
		return l.number(start)
	}
	if strings.HasPrefix(l.src[start+1:], "INF") {
		end := start + 1 + identLen(l.src[start+1:])
		if l.src[start+1:end] == "INF" {
			l.pos = end
			return l.literal(start, edm.NewDouble(math.Inf(-1))), nil
		}
	}
	return token{}, errorf(start, "unexpected '-': only numeric literals may be negative and arithmetic is not supported")
}

// number reads a numeric literal whose digits start at l.pos (after any
// minus sign at start). The form decides the type, as in the WCF Data
// Services lexer: digits are Int32, a fraction or exponent makes a Double,
// and a suffix L, D, M or F overrides.
func (l *lexer) number(start int) (token, error) {
	l.digits()
	isFloat := false
	if l.peekByte() == '.' {
		l.pos++
		if !isDigit(l.peekByte()) {
			return token{}, errorf(l.pos, "expected a digit after the decimal point")
		}
		l.digits()
		isFloat = true
	}
	if c := l.peekByte(); c == 'e' || c == 'E' {
		l.pos++
		if c := l.peekByte(); c == '+' || c == '-' {
			l.pos++
		}
		if !isDigit(l.peekByte()) {
			return token{}, errorf(l.pos, "expected a digit in the exponent")
		}
		l.digits()
		isFloat = true
	}
	num := l.src[start:l.pos]
	switch l.peekByte() {
	case 'L', 'l':
		l.pos++
		if isFloat {
			return token{}, errorf(start, "Int64 literal %s must be an integer", l.src[start:l.pos])
		}
		v, err := parseInt64(num)
		if err != nil {
			return token{}, errorf(start, "%v", err)
		}
		return l.literal(start, edm.NewInt64(v)), nil
	case 'D', 'd':
		l.pos++
		isFloat = true
	case 'M', 'm':
		return token{}, errorf(start, "Edm.Decimal literal %s is not supported by the Table service", l.src[start:l.pos+1])
	case 'F', 'f':
		return token{}, errorf(start, "Edm.Single literal %s is not supported by the Table service", l.src[start:l.pos+1])
	}
	if isFloat {
		v, err := parseDouble(num)
		if err != nil {
			return token{}, errorf(start, "%v", err)
		}
		return l.literal(start, edm.NewDouble(v)), nil
	}
	v, err := parseInt32(num)
	if err != nil {
		return token{}, errorf(start, "%v", err)
	}
	return l.literal(start, edm.NewInt32(v)), nil
}

func (l *lexer) digits() {
	for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
		l.pos++
	}
}

func (l *lexer) peekByte() byte {
	if l.pos < len(l.src) {
		return l.src[l.pos]
	}
	return 0
}

// identOrPrefixed reads an identifier; if a quote follows it directly, it
// is the prefix of a typed literal such as datetime'...'.
func (l *lexer) identOrPrefixed(start int) (token, error) {
	l.pos += identLen(l.src[start:])
	name := l.src[start:l.pos]
	if l.peekByte() == '\'' && isLiteralPrefix(name) {
		return l.prefixed(start, name)
	}
	switch name {
	case "NaN":
		return l.literal(start, edm.NewDouble(math.NaN())), nil
	case "INF":
		return l.literal(start, edm.NewDouble(math.Inf(1))), nil
	}
	return token{kind: tokIdent, pos: start, text: name}, nil
}

func (l *lexer) prefixed(start int, prefix string) (token, error) {
	body, err := l.quoted()
	if err != nil {
		return token{}, err
	}
	var v edm.Value
	switch {
	case strings.EqualFold(prefix, "datetime"):
		t, err := parseDateTime(body)
		if err != nil {
			return token{}, errorf(start, "%v", err)
		}
		v = edm.NewDateTime(t)
	case strings.EqualFold(prefix, "guid"):
		// edm.ParseGuid takes the forms .NET's Guid parser takes (D, N, B
		// and P), which is what reads a guid literal in the service.
		g, ok := edm.ParseGuid(body)
		if !ok {
			return token{}, errorf(start, "invalid guid literal %q: want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", body)
		}
		v = edm.NewGuid(g)
	case strings.EqualFold(prefix, "binary"), strings.EqualFold(prefix, "X"):
		b, err := parseBinary(body)
		if err != nil {
			return token{}, errorf(start, "%v", err)
		}
		v = edm.NewBinary(b)
	default: // datetimeoffset, time, geography, geometry
		return token{}, errorf(start, "%s literals are not supported by the Table service", prefix)
	}
	return l.literal(start, v), nil
}

// isLiteralPrefix reports whether name, directly followed by a quote,
// starts a typed literal. The WCF Data Services lexer knows these prefixes,
// ignoring case; any other name is a name, so "A eq'x'" still compares A
// with 'x'.
func isLiteralPrefix(name string) bool {
	for _, p := range [...]string{"datetime", "guid", "binary", "X", "datetimeoffset", "time", "geography", "geometry"} {
		if strings.EqualFold(name, p) {
			return true
		}
	}
	return false
}

// identLen is the byte length of the identifier at the start of s (0 if
// none). Identifiers follow the C# rule the Table service applies to
// property names (model.IsPropertyNameStart and IsPropertyNamePart), which
// the WCF Data Services lexer applies to names in a filter.
func identLen(s string) int {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if i == 0 && !model.IsPropertyNameStart(r) || i > 0 && !model.IsPropertyNamePart(r) {
			break
		}
		i += n
	}
	return i
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
