package tables

import (
	"strings"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
)

// ETag formats an entity's ETag from its Timestamp, as Azure does:
// W/"datetime'2024-12-23T09%3A20%3A10.1623783Z'" with URL-encoded colons
// ("Payload format for Table service operations") and the datetime in
// edm.FormatDateTime's shortest form, as Azure's recorded answers write it
// (W/"datetime'2020-10-01T00%3A38%3A36.310293Z'"). If-Match is read as a
// time (parseETagValue), so any spelling of the same Timestamp matches.
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

// unmatchableTimestamp is the condition of a well-formed ETag that names no
// Timestamp this service issues: Timestamps lie within 1601..9999, so no
// entity carries year 1 and the write fails its condition.
var unmatchableTimestamp = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)

// weakETag returns the opaque part (what lies between the quotes) of a weak
// ETag, W/"opaque" with the W in either case, holding no quote: one ETag,
// not a list.
func weakETag(etag string) (string, bool) {
	if len(etag) < 4 || etag[0]|0x20 != 'w' || etag[1] != '/' || etag[2] != '"' || etag[len(etag)-1] != '"' {
		return "", false
	}
	opaque := etag[3 : len(etag)-1]
	if strings.IndexByte(opaque, '"') >= 0 {
		return "", false
	}
	return opaque, true
}

// parseETagValue reads the opaque part of an ETag: datetime'<timestamp>'
// with the colons URL-encoded or not.
func parseETagValue(opaque string) (time.Time, bool) {
	s, ok := strings.CutPrefix(opaque, "datetime'")
	if !ok {
		return time.Time{}, false
	}
	s, ok = strings.CutSuffix(s, "'")
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
