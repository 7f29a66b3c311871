package tables

import (
	"strings"
	"time"
)

// ETag formats an entity's ETag from its Timestamp, as Azure does:
// W/"datetime'2024-12-23T09%3A20%3A10.1623783Z'" — 7 fractional digits and
// URL-encoded colons ("Payload format for Table service operations").
func ETag(ts time.Time) string {
	var b strings.Builder
	b.Grow(48)
	b.WriteString(`W/"datetime'`)
	b.WriteString(strings.ReplaceAll(formatTimestamp(ts), ":", "%3A"))
	b.WriteString(`'"`)
	return b.String()
}

// formatTimestamp writes a Timestamp with exactly 7 fractional digits.
func formatTimestamp(ts time.Time) string {
	return ts.UTC().Format("2006-01-02T15:04:05.0000000Z")
}

// parseETag returns the Timestamp an ETag names. ok is false for anything
// this service never issued; such an If-Match can never match.
func parseETag(etag string) (time.Time, bool) {
	s := strings.TrimPrefix(etag, "W/")
	s, ok := strings.CutPrefix(s, `"datetime'`)
	if !ok {
		return time.Time{}, false
	}
	s, ok = strings.CutSuffix(s, `'"`)
	if !ok {
		return time.Time{}, false
	}
	s = strings.ReplaceAll(s, "%3A", ":")
	s = strings.ReplaceAll(s, "%3a", ":")
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t.UTC(), true
}
