package auth

import (
	"net/url"
	"slices"
	"strings"
)

// decodedPathSpellings returns the spellings a client may have signed for
// a path a proxy decoded, given Go's escaping of it: the decoded path
// itself, and for an entity address the SDKs' escapings of its keys
// (entityKeySpellings). Only spellings that decode back to the same path
// are returned, so a signature authorizes exactly the entity the path
// names: the decoded path "x%20y" (the entity 'x%20y', sent as x%2520y)
// never matches a signature over x%20y (the entity 'x y').
func decodedPathSpellings(goEscaped string) []string {
	decoded, err := url.PathUnescape(goEscaped)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range append([]string{decoded}, entityKeySpellings(decoded)...) {
		if p == goEscaped || slices.Contains(out, p) {
			continue
		}
		if d, err := url.PathUnescape(p); err != nil || d != decoded {
			continue
		}
		out = append(out, p)
	}
	return out
}

// entityKeySpellings returns the ways the SDKs spell an entity address
// whose path arrives decoded ("/acct/t(PartitionKey='a b',RowKey='100%')"):
// each escapes the key values (quotes already doubled) but keeps the
// address's own quotes, parentheses, comma and equals signs literal.
//
//   - Go aztables: url.PathEscape.
//   - .NET, Python, Java: RFC 3986 escaping of everything but the
//     unreserved characters (Uri.EscapeDataString, quote(safe="")).
//   - JavaScript: encodeURIComponent, which keeps !'()* as well.
//
// It returns nil when the last segment is not an entity address.
func entityKeySpellings(decoded string) []string {
	slash := strings.LastIndexByte(decoded, '/')
	dir, seg := decoded[:slash+1], decoded[slash+1:]
	open := strings.IndexByte(seg, '(')
	if open < 0 {
		return nil
	}
	pk, rest, ok := quotedKey(seg[open+1:], "PartitionKey=")
	if !ok || !strings.HasPrefix(rest, ",") {
		return nil
	}
	rk, rest, ok := quotedKey(rest[1:], "RowKey=")
	if !ok || rest != ")" {
		return nil
	}
	name := dir + seg[:open]
	var out []string
	for _, esc := range []func(string) string{url.PathEscape, escapeRFC3986, escapeURIComponent} {
		out = append(out, name+"(PartitionKey='"+esc(pk)+"',RowKey='"+esc(rk)+"')")
	}
	return out
}

// quotedKey reads name='value' (with ” standing for a quote inside) from
// the start of s, returning value as written (quotes still doubled).
func quotedKey(s, name string) (value, rest string, ok bool) {
	s, ok = strings.CutPrefix(s, name+"'")
	if !ok {
		return "", "", false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\'' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			i++
			continue
		}
		return s[:i], s[i+1:], true
	}
	return "", "", false
}

// escapeRFC3986 escapes every byte but the unreserved characters.
func escapeRFC3986(s string) string { return escapeExcept(s, "-_.~") }

// escapeURIComponent is JavaScript's encodeURIComponent.
func escapeURIComponent(s string) string { return escapeExcept(s, "-_.~!*'()") }

func escapeExcept(s, keep string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) * 3)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
