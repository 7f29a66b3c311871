package batch

import (
	"net/url"
	"strings"
)

// parseSimpleURL fills u from target and returns true if target is an
// absolute URL of the plain shape every SDK sends,
//
//	http[s]://host[:port]/path[?query]
//
// with a host of letters, digits, dots and dashes, a path without percent
// escapes, and a query of printable ASCII. For those, url.ParseRequestURI
// yields exactly these fields (reference_internal_test.go checks it) with
// an allocation and general validation per operation. Anything
// else returns false and goes through url.ParseRequestURI.
func parseSimpleURL(u *url.URL, target string) bool {
	var scheme, rest string
	switch {
	case strings.HasPrefix(target, "http://"):
		scheme, rest = "http", target[len("http://"):]
	case strings.HasPrefix(target, "https://"):
		scheme, rest = "https", target[len("https://"):]
	default:
		return false
	}
	i := 0
	for i < len(rest) && urlByteClass[rest[i]]&classHost != 0 {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(rest) && rest[i] == ':' {
		j := i + 1
		for j < len(rest) && '0' <= rest[j] && rest[j] <= '9' {
			j++
		}
		if j == i+1 {
			return false
		}
		i = j
	}
	host, rest := rest[:i], rest[i:]
	if rest == "" || rest[0] != '/' {
		return false
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	if hasQuery && query == "" {
		return false // url.URL.ForceQuery territory
	}
	rawPath := ""
	for i := 0; i < len(path); i++ {
		switch class := urlByteClass[path[i]]; {
		case class&classPath != 0:
		case class&classPathEscaped != 0:
			// url.URL keeps a path its default encoding would change
			// (the quotes and parentheses of entity keys) as RawPath.
			rawPath = path
		default:
			return false
		}
	}
	for i := 0; i < len(query); i++ {
		if c := query[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	*u = url.URL{Scheme: scheme, Host: host, Path: path, RawPath: rawPath, RawQuery: query}
	return true
}

const (
	classHost = 1 << iota
	// classPath bytes are left alone by url.PathEscape's path mode.
	classPath
	// classPathEscaped bytes are legal in a path sent as is but escaped
	// by url.URL's default path encoding.
	classPathEscaped
)

var urlByteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		alnum := '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if alnum || c == '.' || c == '-' {
			t[c] |= classHost
		}
		if alnum || c < 0x80 && strings.IndexByte("$&+,-./:;=@_~", byte(c)) >= 0 {
			t[c] |= classPath
		}
		if c < 0x80 && strings.IndexByte("!'()*", byte(c)) >= 0 {
			t[c] |= classPathEscaped
		}
	}
	return t
}()
