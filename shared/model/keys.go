package model

import (
	"strconv"
	"unicode/utf8"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// ValidateKey checks a PartitionKey (isRowKey false) or RowKey value. The
// empty string is a valid key. The data model forbids these characters in
// key fields:
//   - '/', '\', '#' and '?'
//   - the control characters U+0000 to U+001F and U+007F to U+009F
//
// A forbidden character, or invalid UTF-8, is 400 InvalidInput. Azure
// answers that ("Bad Request - Error in query syntax"), as the .NET and
// Python SDK issue reports record. A key longer than MaxKeyLength UTF-16
// code units is 400 KeyValueTooLarge, the service's code for it.
func ValidateKey(value string, isRowKey bool) error {
	which := PartitionKeyName
	if isRowKey {
		which = RowKeyName
	}
	forbidden := func() error {
		return newError(apierr.InvalidInput, "",
			"The "+which+" contains a character that is not allowed ('/', '\\', '#', '?' and control characters are not allowed).")
	}
	for i := 0; i < len(value); {
		c := value[i]
		if c < utf8.RuneSelf {
			if forbiddenKeyByte[c] {
				return forbidden()
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(value[i:])
		if r == utf8.RuneError && size == 1 {
			return newError(apierr.InvalidInput, "", "The "+which+" is not valid UTF-8.")
		}
		if r >= 0x80 && r <= 0x9f {
			return forbidden()
		}
		i += size
	}
	if n := utf16Len(value); n > MaxKeyLength {
		return newError(codeKeyValueTooLarge, msgKeyValueTooLarge, which+" length: "+strconv.Itoa(n))
	}
	return nil
}

// forbiddenKeyByte holds the ASCII characters keys may not contain: '/',
// '\\', '#', '?' and the C0 controls and DEL. Every key of every write is
// checked byte by byte, so one table lookup stands for six comparisons.
var forbiddenKeyByte = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == '#' || c == '?'
	}
	return t
}()
