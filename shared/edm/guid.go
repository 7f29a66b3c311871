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
// s[off:off+n], in canonical form to dst. It maps each digit through a
// table and checks them all at once at the end, with no branch per
// character, since decoding and validating an entity parses each Guid.
func guidDigits[S string | []byte](dst []byte, s S, off, n int, dashed bool) ([]byte, bool) {
	src := &guidUndashed
	if dashed {
		if s[off+8] != '-' || s[off+13] != '-' || s[off+18] != '-' || s[off+23] != '-' {
			return dst, false
		}
		src = &guidDashed
	}
	s = s[off : off+n]
	out := [36]byte{8: '-', 13: '-', 18: '-', 23: '-'}
	var bad byte
	for k, at := range guidDashed {
		c := hexLower[s[src[k]]]
		bad |= c
		out[at] = c
	}
	if bad&hexInvalid != 0 {
		return dst, false
	}
	return append(dst, out[:]...), true
}

// guidDashed and guidUndashed are the offsets of a Guid's 32 digits in its D
// form (8-4-4-4-12, which is also where they go) and its N form.
var (
	guidDashed   = [32]uint8{0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 14, 15, 16, 17, 19, 20, 21, 22, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35}
	guidUndashed = [32]uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}
)

// hexInvalid marks, in hexLower, a byte that is no hex digit. It is a bit
// no digit's lower-case form has.
const hexInvalid = 0x80

// hexLower maps a hex digit to its lower-case form and any other byte to
// hexInvalid.
var hexLower = func() (t [256]byte) {
	for c := range t {
		switch {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
			t[c] = byte(c)
		case 'A' <= c && c <= 'F':
			t[c] = byte(c) + 'a' - 'A'
		default:
			t[c] = hexInvalid
		}
	}
	return t
}()
