package edm

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"unicode/utf8"
)

// The JSON lexing helpers the decoder shares: number grammar, escapes and
// unescaping. They follow RFC 8259's grammar exactly, so anything the
// decoder accepts, any JSON reader accepts too. On top of it they refuse
// lone surrogates, which are not characters and cannot be stored.

// scanNumber checks the JSON number grammar
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from b[i] and returns where
// the number ends and whether it is integral.
func scanNumber(b []byte, i int) (end int, integral, ok bool) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return i, false, false
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false, false
	}
	integral = true
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false, false
		}
		integral = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == start {
			return i, false, false
		}
		integral = false
	}
	return i, integral, true
}

// skipPlain returns the index of the first byte at or after b[i] that a
// string scan must look at: a control character, '"', '\\' or a non-ASCII
// byte, or len(b). It tests eight bytes at a time (SWAR) because scanning
// strings is most of decoding an entity, and a byte loop here makes a
// whole request measurably slower (BenchmarkBatchInsert100 in
// shared/httpapi).
func skipPlain(b []byte, i int) int {
	for i+8 <= len(b) {
		if m := specialBytes(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	return i
}

// SWAR constants: a one and a high bit in every byte of a word.
const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// specialBytes returns x, eight bytes read little-endian, with the high bit
// of each byte set that skipPlain stops at: below 0x20, '"', '\\', or 0x80
// and above. ("Bit Twiddling Hacks": hasless and haszero.) Bytes after the
// first flagged one may be flagged wrongly through a borrow, but never one
// before it, so the lowest flag is exact.
func specialBytes(x uint64) uint64 {
	control := (x - 0x20*lowBits) &^ x
	q := x ^ '"'*lowBits
	quote := (q - lowBits) &^ q
	bs := x ^ '\\'*lowBits
	backslash := (bs - lowBits) &^ bs
	return (control | quote | backslash | x) & highBits
}

// escapeLen returns the length of the valid escape at b[i] (a backslash),
// or 0. A \u escape of a high surrogate must be followed by one of a low
// surrogate: a lone surrogate is no character and cannot be stored.
func escapeLen(b []byte, i int) int {
	if i+1 >= len(b) {
		return 0
	}
	switch b[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		u, ok := hex4(b, i+2)
		switch {
		case !ok:
			return 0
		case u >= 0xD800 && u <= 0xDBFF:
			if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if lo, ok := hex4(b, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					return 12
				}
			}
			return 0
		case u >= 0xDC00 && u <= 0xDFFF:
			return 0
		}
		return 6
	}
	return 0
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// unescape appends the decoded form of s, the validated content of a JSON
// string, to dst.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := bytes.IndexByte(s[i:], '\\')
			if j < 0 {
				return append(dst, s[i:]...)
			}
			dst = append(dst, s[i:i+j]...)
			i += j
			continue
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, _ := hex4(s, i+2)
			if r >= 0xD800 && r <= 0xDBFF {
				lo, _ := hex4(s, i+8)
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			}
			dst = utf8.AppendRune(dst, r)
			i += 6
			continue
		default: // '"', '\\', '/'
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}
