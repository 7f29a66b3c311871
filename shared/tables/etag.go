package tables

import (
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
)

// ETag formats an entity's ETag from its Timestamp, as Azure does:
// W/"datetime'2024-12-23T09%3A20%3A10.1623783Z'" — 7 fractional digits and
// URL-encoded colons ("Payload format for Table service operations").
func ETag(ts time.Time) string {
	var buf [52]byte
	return string(AppendETag(buf[:0], ts, false))
}

// AppendETag appends the ETag of ts to b. With jsonEscaped it writes the
// quotes as \" so the result can stand inside a JSON string (odata.etag).
// It runs once per entity of every query page, so it uses edm's DateTime
// writer rather than time.Format's general layout interpreter.
func AppendETag(b []byte, ts time.Time, jsonEscaped bool) []byte {
	quote := `"`
	if jsonEscaped {
		quote = `\"`
	}
	b = append(b, "W/"...)
	b = append(b, quote...)
	b = append(b, "datetime'"...)
	var tmp [32]byte
	for _, c := range edm.AppendDateTime(tmp[:0], ts) {
		if c == ':' {
			b = append(b, "%3A"...)
		} else {
			b = append(b, c)
		}
	}
	b = append(b, '\'')
	return append(b, quote...)
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
