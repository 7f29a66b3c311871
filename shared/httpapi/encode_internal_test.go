package httpapi

import (
	"net/http"
	"testing"

	"github.com/tablebridge/tablebridge/shared/model"
)

// TestEntityLocation checks the one-allocation Location builder against
// keyLiteral, for keys that take the unescaped fast path and keys that need
// quoting or escaping, and keyLiteral against the spelling Azure writes:
// quotes doubled and left as they are (the Java SDK's recording
// TableAsyncClientTest.getEntityWithSingleQuotesInPartitionKey), the rest
// percent-encoded as a path segment.
func TestEntityLocation(t *testing.T) {
	t.Parallel()
	const base = "http://127.0.0.1:10002/devstoreaccount1"
	for _, tt := range []struct{ name, pk, rk, literalPK string }{
		{"plain", "b0001-000042", "0000000123", "'b0001-000042'"},
		{"unreserved marks", "a.b_c~d-e", "Z9", "'a.b_c~d-e'"},
		{"empty keys", "", "", "''"},
		{"quote doubled", "O'Brien", "it's", "'O''Brien'"},
		{"quotes only", "''", "'", "''''''"},
		{"space and slash escaped", "a b", "c/d", "'a%20b'"},
		{"reserved kept", "a:b@c=d&e+f$g", "h,i;j", "'a:b@c=d&e+f$g'"},
		{"non-ASCII", "Zürich", "日本", "'Z%C3%BCrich'"},
		{"percent", "100%", "%41", "'100%25'"},
		{"an escaped quote is a key of its own", "%27", "'", "'%2527'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &model.Entity{PartitionKey: tt.pk, RowKey: tt.rk}
			want := base + "/" + "t1" + "(PartitionKey=" + keyLiteral(tt.pk) + ",RowKey=" + keyLiteral(tt.rk) + ")"
			if got := entityLocation(base, "t1", e); got != want {
				t.Errorf("entityLocation = %q, want %q", got, want)
			}
			if got := keyLiteral(tt.pk); got != tt.literalPK {
				t.Errorf("keyLiteral(%q) = %q, want %q", tt.pk, got, tt.literalPK)
			}
		})
	}
}

// TestPreferenceOf covers the Prefer header forms: either preference, any
// case and spacing, in a list or a second header line, and the first one
// given winning.
func TestPreferenceOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                string
		values              []string
		noContent, explicit bool
	}{
		{"absent", nil, false, false},
		{"no content", []string{"return-no-content"}, true, true},
		{"content", []string{"return-content"}, false, true},
		{"case and spaces", []string{"  Return-No-Content "}, true, true},
		{"in a list", []string{"odata.maxpagesize=10, return-no-content"}, true, true},
		{"first wins", []string{"return-content,return-no-content"}, false, true},
		{"second header line", []string{"respond-async", "return-no-content"}, true, true},
		{"unknown only", []string{"respond-async, wait=10"}, false, false},
		{"empty value", []string{""}, false, false},
		{"near miss", []string{"return-no-contents"}, false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.values {
				h.Add("Prefer", v)
			}
			noContent, explicit := preferenceOf(h)
			if noContent != tt.noContent || explicit != tt.explicit {
				t.Errorf("preferenceOf(%q) = %v, %v, want %v, %v", tt.values, noContent, explicit, tt.noContent, tt.explicit)
			}
		})
	}
}

func TestHeaderValue(t *testing.T) {
	t.Parallel()
	h := http.Header{"If-Match": {"*", "x"}, "Accept": {}}
	for _, key := range []string{"If-Match", "Accept", "Prefer"} {
		if got, want := headerValue(h, key), h.Get(key); got != want {
			t.Errorf("headerValue(%q) = %q, want %q", key, got, want)
		}
	}
}
