package httpapi

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
)

// TestContinuationCursors: a token that decodes to something the service
// never hands out is refused with 400 InvalidInput before any store sees
// it; the keys of entities and names of tables come back as they went out.
func TestContinuationCursors(t *testing.T) {
	t.Parallel()
	good := []struct{ pk, rk string }{
		{"", ""}, {"p", ""}, {"p", "r"}, {"日本語", "😀+=%'"}, {strings.Repeat("x", model.MaxKeyLength), strings.Repeat("é", model.MaxKeyLength)},
	}
	for _, k := range good {
		q := url.Values{"NextPartitionKey": {encodeToken(k.pk)}, "NextRowKey": {encodeToken(k.rk)}}
		c, err := entityCursor(q)
		if err != nil || c == nil || c.PartitionKey != k.pk || c.RowKey != k.rk {
			t.Fatalf("cursor %q/%q: %+v, %v", k.pk, k.rk, c, err)
		}
	}
	if c, err := entityCursor(url.Values{"NextRowKey": {encodeToken("r")}}); c != nil || err != nil {
		t.Fatalf("a NextRowKey alone: %+v, %v", c, err)
	}
	bad := map[string]url.Values{
		"RowKey of 2,000 characters":   {"NextPartitionKey": {encodeToken("p")}, "NextRowKey": {encodeToken(strings.Repeat("x", 2000))}},
		"PartitionKey of 1,025":        {"NextPartitionKey": {encodeToken(strings.Repeat("x", model.MaxKeyLength+1))}},
		"control character":            {"NextPartitionKey": {encodeToken("p\x00")}},
		"slash":                        {"NextPartitionKey": {encodeToken("p")}, "NextRowKey": {encodeToken("a/b")}},
		"not UTF-8":                    {"NextPartitionKey": {encodeToken("\xff")}},
		"not a token":                  {"NextPartitionKey": {"p"}},
		"RowKey token malformed":       {"NextPartitionKey": {encodeToken("p")}, "NextRowKey": {"1!9!abc"}},
		"empty RowKey token malformed": {"NextPartitionKey": {encodeToken("p")}, "NextRowKey": {"1!"}},
	}
	for name, q := range bad {
		t.Run(name, func(t *testing.T) {
			_, err := entityCursor(q)
			wantBadToken(t, err)
		})
	}
	// The name comes back as the token gave it; the service resumes after
	// it in any case (tables.TestQueryTablesResumesInAnyCase).
	for _, name := range []string{"mytable", "MyTable"} {
		got, err := tableCursor(url.Values{"NextTableName": {encodeToken(name)}})
		if err != nil || got != name {
			t.Fatalf("table cursor %q: %q, %v", name, got, err)
		}
	}
	for _, name := range []string{"", "ab", "1abc", "a-b-c", strings.Repeat("a", 64), "zz\x00", strings.Repeat("z", 3000), "tables"} {
		_, err := tableCursor(url.Values{"NextTableName": {encodeToken(name)}})
		wantBadToken(t, err)
	}
}

func wantBadToken(t *testing.T, err error) {
	t.Helper()
	aerr, ok := apierr.As(err)
	if !ok || aerr.Code != apierr.InvalidInput || aerr.HTTPStatus() != http.StatusBadRequest {
		t.Fatalf("got %v, want 400 InvalidInput", err)
	}
}

// FuzzContinuation: whatever a client sends as continuation tokens, the
// answer is a cursor that holds valid keys (or a valid table name), or 400
// InvalidInput; never a panic, and never a cursor a store could choke on.
func FuzzContinuation(f *testing.F) {
	for _, s := range []string{"", "x", "1!", "1!0!", "1!4!cGsx", "1!2!YQ", "1!3!abcd", encodeToken(strings.Repeat("x", 2000)), encodeToken("p\x00"), encodeToken("mytable")} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		c, err := entityCursor(url.Values{"NextPartitionKey": {a}, "NextRowKey": {b}})
		switch {
		case err != nil:
			wantBadToken(t, err)
		case c != nil:
			if model.ValidateKey(c.PartitionKey, false) != nil || model.ValidateKey(c.RowKey, true) != nil {
				t.Fatalf("cursor with invalid keys %q/%q", c.PartitionKey, c.RowKey)
			}
			if encodeToken(c.PartitionKey) != a {
				// Base64 has one spelling per key here, so a token that
				// decodes is the service's own encoding of its key.
				t.Fatalf("token %q decoded to %q, which encodes as %q", a, c.PartitionKey, encodeToken(c.PartitionKey))
			}
		}
		name, err := tableCursor(url.Values{"NextTableName": {a}})
		switch {
		case err != nil:
			wantBadToken(t, err)
		case a != "" && (model.ValidateTableName(name) != nil || !utf8.ValidString(name)):
			t.Fatalf("table cursor %q from %q", name, a)
		}
	})
}

func TestContinuationTokenHasOneSpelling(t *testing.T) {
	t.Parallel()
	// "YR" carries the bits of "a" plus non-zero padding bits.
	if _, err := decodeToken("1!2!YR"); err == nil {
		t.Fatal("a token with non-zero padding bits decoded")
	}
}
