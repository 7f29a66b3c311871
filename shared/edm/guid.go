package edm

// ParseGuid parses a Guid and returns it in the canonical form the package
// stores: 32 lower-case hex digits grouped 8-4-4-4-12. It accepts the forms
// .NET's Guid.Parse accepts for plain Guids, which is what the service reads
// an Edm.Guid with: "D" (8-4-4-4-12), "N" (32 digits), "B" ({D}) and "P"
// ((D)), in either letter case. A Guid already canonical is returned as it
// is, without allocating: model.ValidateValue checks every decoded Guid so.
func ParseGuid(s string) (string, bool) {
	var out [36]byte
	g, ok := appendGuid(out[:0], s)
	switch {
	case !ok:
		return "", false
	case string(g) == s:
		return s, true
	}
	return string(g), true
}

// appendGuid appends the canonical form of the Guid s (see ParseGuid) to
// dst. On failure it returns dst unchanged and false.
func appendGuid[S string | []byte](dst []byte, s S) ([]byte, bool) {
	switch len(s) {
	case 32:
		return guidDigits(dst, s, 0, 32, false)
	case 36:
		return guidDigits(dst, s, 0, 36, true)
	case 38:
		if (s[0] == '{' && s[37] == '}') || (s[0] == '(' && s[37] == ')') {
			return guidDigits(dst, s, 1, 36, true)
		}
	}
	return dst, false
}

// guidDigits appends the N form, or with dashes the D form, read from
// s[off:off+n], in canonical form to dst.
func guidDigits[S string | []byte](dst []byte, s S, off, n int, dashed bool) ([]byte, bool) {
	var out [36]byte
	j := 0
	for i := 0; i < n; i++ {
		c := s[off+i]
		if dashed && (i == 8 || i == 13 || i == 18 || i == 23) {
			if c != '-' {
				return dst, false
			}
			out[j] = '-'
			j++
			continue
		}
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'f':
		case c >= 'A' && c <= 'F':
			c += 'a' - 'A'
		default:
			return dst, false
		}
		if !dashed && (j == 8 || j == 13 || j == 18 || j == 23) {
			out[j] = '-'
			j++
		}
		out[j] = c
		j++
	}
	return append(dst, out[:]...), true
}
