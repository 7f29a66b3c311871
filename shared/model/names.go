package model

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// ValidateTableName checks a table name against the data model's rule,
// "^[A-Za-z][A-Za-z0-9]{2,62}$", and against the reserved name "tables" in
// any case. A violation is 400 InvalidResourceName, which is what Azure
// answers (the Python SDK's live tests record it, with its "specifed"
// typo). The data model page's "404 (Bad Request)" for reserved names is a
// typo for 400.
func ValidateTableName(name string) error {
	if !isTableName(name) {
		return newError(apierr.InvalidResourceName, "", "TableName: "+quote(name))
	}
	if strings.EqualFold(name, "tables") {
		return newError(apierr.InvalidResourceName, "", "The table name "+quote(name)+" is reserved.")
	}
	return nil
}

func isTableName(name string) bool {
	if len(name) < MinTableNameLength || len(name) > MaxTableNameLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// ValidatePropertyName checks a custom property name. Names follow the
// rules for C# identifiers, as the data model requires:
//   - The first character is a letter (Unicode categories Lu, Ll, Lt, Lm,
//     Lo or Nl) or an underscore.
//   - Later characters may also be decimal digits (Nd), connecting
//     punctuation (Pc), combining marks (Mn, Mc) or formatting characters
//     (Cf).
//
// That excludes "-" (refused since version 2009-04-14), ".", "@", spaces,
// control characters and everything else XML or URLs cannot carry. Names
// are at most MaxPropertyNameLength UTF-16 code units.
//
// A name too long is 400 PropertyNameTooLong. Any other violation, such as
// an empty name or a leading digit, is 400 PropertyNameInvalid. Azure's
// Java SDK tests record both codes: 256 letters is too long, 255 digits is
// invalid. The system names (PartitionKey, RowKey, Timestamp) pass here:
// whether they may appear is the caller's business (see ValidateEntity).
func ValidatePropertyName(name string) error {
	_, err := validatePropertyName(name)
	return err
}

// validatePropertyName is ValidatePropertyName that also returns the
// name's length in UTF-16 code units, which the entity size needs. An
// ASCII name, the usual kind, is checked in one pass over a byte table.
func validatePropertyName(name string) (int, error) {
	if len(name) <= MaxPropertyNameLength && isASCIIIdentifier(name) {
		return len(name), nil
	}
	n := utf16Len(name)
	if n > MaxPropertyNameLength {
		return 0, newError(apierr.PropertyNameTooLong, msgPropertyNameTooLong, "PropertyName: "+quote(name))
	}
	if !isIdentifier(name) {
		return 0, newError(apierr.PropertyNameInvalid, "", "PropertyName: "+quote(name))
	}
	return n, nil
}

// isASCIIIdentifier reports whether name is a non-empty identifier of ASCII
// letters, digits and underscores that does not start with a digit: the
// ASCII names isIdentifier accepts.
func isASCIIIdentifier(name string) bool {
	if name == "" || asciiNameBytes[name[0]]&nameStart == 0 {
		return false
	}
	for i := 1; i < len(name); i++ {
		if asciiNameBytes[name[i]]&namePart == 0 {
			return false
		}
	}
	return true
}

// Classes of asciiNameBytes.
const (
	nameStart = 1 << iota
	namePart
)

// asciiNameBytes classifies the ASCII bytes IsPropertyNameStart and
// IsPropertyNamePart accept; bytes from 0x80 up are in no class.
var asciiNameBytes = func() (t [256]uint8) {
	for c := rune(0); c < utf8.RuneSelf; c++ {
		if IsPropertyNameStart(c) {
			t[c] |= nameStart
		}
		if IsPropertyNamePart(c) {
			t[c] |= namePart
		}
	}
	return t
}()

func isIdentifier(name string) bool {
	if name == "" {
		return false
	}
	for i, r := range name {
		if i == 0 && !IsPropertyNameStart(r) || i > 0 && !IsPropertyNamePart(r) {
			return false
		}
	}
	return true
}

// IsPropertyNameStart reports whether r may begin a property name: a letter
// (Unicode categories Lu, Ll, Lt, Lm, Lo or Nl) or an underscore, as in a
// C# identifier. The $filter lexer reads names with the same rule.
func IsPropertyNameStart(r rune) bool {
	if r < utf8.RuneSelf {
		return r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z')
	}
	// U+FFFD, which also stands for invalid UTF-8, is no letter.
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
}

// IsPropertyNamePart reports whether r may follow the first character of a
// property name: what may begin one, or a decimal digit (Nd), connecting
// punctuation (Pc), a combining mark (Mn, Mc) or a formatting character
// (Cf).
func IsPropertyNamePart(r rune) bool {
	if r < utf8.RuneSelf {
		return IsPropertyNameStart(r) || (r >= '0' && r <= '9')
	}
	return IsPropertyNameStart(r) || unicode.In(r, unicode.Nd, unicode.Pc, unicode.Mn, unicode.Mc, unicode.Cf)
}

// utf16Len is the length of s in UTF-16 code units, the unit Azure's limits
// are stated in. Invalid UTF-8 bytes count one each, as their replacement
// character would.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// quote quotes s for an error detail, shortened so that a huge input cannot
// make a huge message.
func quote(s string) string {
	const maxLen = 64
	if len(s) > maxLen {
		cut := maxLen
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return strconv.Quote(s[:cut]) + "..."
	}
	return strconv.Quote(s)
}
