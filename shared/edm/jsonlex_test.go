package edm

import (
	"strconv"
	"strings"
	"testing"
)

// TestSkipPlain compares the eight-bytes-at-a-time scan with the byte loop
// it replaces, for every byte value at every position of buffers around
// the word size, so each lane of the SWAR test and the tail loop are
// covered, and for a special byte after another one (a borrow must not
// hide the first).
func TestSkipPlain(t *testing.T) {
	t.Parallel()
	reference := func(b []byte, i int) int {
		for i < len(b) {
			if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
				break
			}
			i++
		}
		return i
	}
	for _, size := range []int{0, 1, 7, 8, 9, 15, 16, 17, 24} {
		for pos := 0; pos < size; pos++ {
			for c := 0; c < 256; c++ {
				b := make([]byte, size)
				for i := range b {
					b[i] = 'a'
				}
				b[pos] = byte(c)
				for start := range min(size, 3) {
					if got, want := skipPlain(b, start), reference(b, start); got != want {
						t.Fatalf("size %d, byte %#x at %d, from %d: skipPlain = %d, want %d", size, c, pos, start, got, want)
					}
				}
				if pos+1 < size {
					b[pos+1] = 0x00 // a second special byte right behind
					if got, want := skipPlain(b, 0), reference(b, 0); got != want {
						t.Fatalf("size %d, byte %#x at %d then NUL: skipPlain = %d, want %d", size, c, pos, got, want)
					}
				}
			}
		}
	}
	if got := skipPlain([]byte("abc"), 3); got != 3 {
		t.Errorf("skipPlain at the end = %d, want 3", got)
	}
}

// TestHashNameTellsLongNamesApart checks that names differing in any one
// byte, at any length around the word size, hash differently, and that
// equal names hash equally.
func TestHashNameTellsLongNamesApart(t *testing.T) {
	t.Parallel()
	for size := 1; size <= 40; size++ {
		base := make([]byte, size)
		for i := range base {
			base[i] = byte('A' + i%26)
		}
		h := hashName(base)
		if hashName(append([]byte(nil), base...)) != h {
			t.Fatalf("size %d: equal names hash differently", size)
		}
		for i := range base {
			other := append([]byte(nil), base...)
			other[i] = '_'
			if hashName(other) == h {
				t.Errorf("size %d: changing byte %d keeps hash %#x", size, i, h)
			}
		}
	}
}

// TestParseIntegerMatchesStrconv compares parseInteger with
// strconv.ParseInt around both integer ranges and the 18-digit length up
// to which it checks the range once at the end.
func TestParseIntegerMatchesStrconv(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"0", "-0", "7", "-7", "00000000000000000012", "123456789012345678", "999999999999999999",
		"1000000000000000000", "-999999999999999999", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999999999999",
		"2147483647", "2147483648", "-2147483648", "-2147483649", "000000000000000002147483648",
		"", "-", "12a", "1.0", "+1", " 1", "1 ", "--1", "１",
	}
	for _, bits := range []int{32, 64} {
		for _, in := range inputs {
			got, ok := parseInteger([]byte(in), bits)
			want, err := strconv.ParseInt(in, 10, bits)
			if wantOK := err == nil && !strings.HasPrefix(in, "+"); ok != wantOK || ok && got != want {
				t.Errorf("parseInteger(%q, %d) = %d, %v; strconv: %d, %v", in, bits, got, ok, want, err)
			}
		}
	}
}

// TestHashNameIgnoresCapacity: a short name hashes the same whether its
// word is read in place (masked) or copied, so a property and the
// annotation naming it always meet.
func TestHashNameIgnoresCapacity(t *testing.T) {
	t.Parallel()
	for size := 0; size <= 9; size++ {
		name := []byte("Abcdefghi"[:size])
		tight := append(make([]byte, 0, size), name...)
		padded := append(append(make([]byte, 0, 32), name...), "@odata.type garbage"...)
		if a, b := hashName(tight), hashName(padded[:size]); a != b {
			t.Errorf("%q: hash %#x with capacity %d, %#x with capacity %d", name, a, cap(tight), b, cap(padded))
		}
	}
}

func TestParseTypeBytesMatchesParseType(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Edm.Binary", "Edm.Boolean", "Edm.DateTime", "Edm.Double", "Edm.Guid",
		"Edm.Int32", "Edm.Int64", "Edm.String", "", "Edm.", "edm.string", "Edm.Decimal", "Edm.Int16", "Edm.String "} {
		gotType, gotOK := parseTypeBytes([]byte(name))
		wantType, wantOK := ParseType(name)
		if gotType != wantType || gotOK != wantOK {
			t.Errorf("parseTypeBytes(%q) = %v, %v; ParseType: %v, %v", name, gotType, gotOK, wantType, wantOK)
		}
	}
}
