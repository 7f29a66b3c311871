package httpapi

import (
	"strings"
	"testing"
)

// FuzzJSONMediaType: the fast path for the SDKs' spellings of the JSON
// media type agrees with the media type parser wherever it answers, and
// parseJSONMediaType as a whole answers as the parser does.
func FuzzJSONMediaType(f *testing.F) {
	for _, s := range []string{
		"application/json",
		"application/json;odata=minimalmetadata",
		"application/json;odata=nometadata",
		"application/json;odata=fullmetadata",
		" application/json;odata=nometadata ",
		"application/json; odata=fullmetadata",
		"APPLICATION/JSON;ODATA=NOMETADATA",
		"application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
		"application/json;odata=verbose",
		"application/json;odata=",
		"application/json;",
		"application/atom+xml",
		"*/*",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if lvl, ok := commonJSONMediaType(s); ok {
			if want, wantOK := parseJSONMediaTypeSlow(s); !wantOK || want != lvl {
				t.Fatalf("commonJSONMediaType(%q) = %v; the parser gives %v, %v", s, lvl, want, wantOK)
			}
		}
		got, gotOK := parseJSONMediaType(s)
		want, wantOK := parseJSONMediaTypeSlow(strings.TrimSpace(s))
		if got != want || gotOK != wantOK {
			t.Fatalf("parseJSONMediaType(%q) = %v, %v; the parser gives %v, %v", s, got, gotOK, want, wantOK)
		}
	})
}
