package model

import (
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

func TestValidateKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		code     apierr.Code
	}{
		{"empty is allowed", "", ""},
		{"plain", "customer-0042", ""},
		{"quote is allowed", "o'clock", ""},
		{"punctuation allowed", "a.b,c;d:e|f*g%h&i=j+k(l)[m]{n}<o>~p!q@r$s^t`u\"v", ""},
		{"space allowed", "a b", ""},
		{"tilde (U+007E) allowed", "~", ""},
		{"NBSP (U+00A0) allowed", "\u00a0", ""},
		{"Unicode allowed", "日本語 😀", ""},
		{"longest", strings.Repeat("k", 1024), ""},
		{"longest in UTF-16 units", strings.Repeat("😀", 512), ""},
		{"too long", strings.Repeat("k", 1025), codeKeyValueTooLarge},
		{"too long in UTF-16 units", strings.Repeat("😀", 512) + "k", codeKeyValueTooLarge},
		{"slash", "a/b", apierr.InvalidInput},
		{"backslash", `a\b`, apierr.InvalidInput},
		{"hash", "a#b", apierr.InvalidInput},
		{"question mark", "a?b", apierr.InvalidInput},
		{"NUL", "a\x00", apierr.InvalidInput},
		{"tab", "a\tb", apierr.InvalidInput},
		{"newline", "a\nb", apierr.InvalidInput},
		{"U+001F", "\x1f", apierr.InvalidInput},
		{"DEL U+007F", "\x7f", apierr.InvalidInput},
		{"U+0080", "\u0080", apierr.InvalidInput},
		{"U+009F", "\u009f", apierr.InvalidInput},
		{"invalid UTF-8", "a\xffb", apierr.InvalidInput},
	}
	for _, tc := range tests {
		for _, isRowKey := range []bool{false, true} {
			which := "PartitionKey"
			if isRowKey {
				which = "RowKey"
			}
			t.Run(tc.name+"/"+which, func(t *testing.T) {
				err := ValidateKey(tc.in, isRowKey)
				wantCode(t, err, tc.code)
				if err != nil && !strings.Contains(err.Error(), which) {
					t.Fatalf("error %q does not name the %s", err, which)
				}
			})
		}
	}
}

// TestValidateKeyEveryASCIIByte spells the forbidden ASCII characters out
// once more and checks each of the 128 against ValidateKey's table.
func TestValidateKeyEveryASCIIByte(t *testing.T) {
	t.Parallel()
	for c := 0; c < 0x80; c++ {
		forbidden := c < 0x20 || c == 0x7f || strings.ContainsRune(`/\#?`, rune(c))
		err := ValidateKey("a"+string(rune(c))+"b", false)
		if (err != nil) != forbidden {
			t.Errorf("byte %#x: ValidateKey error %v, want forbidden=%v", c, err, forbidden)
		}
	}
}
