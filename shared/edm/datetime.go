package edm

import "time"

// The Edm.DateTime range the Table service stores: "The supported DateTime
// range begins from 12:00 midnight, January 1, 1601 A.D. (C.E.), UTC. The
// range ends at December 31, 9999." (Understanding the Table service data
// model). Azure answers 400 OutOfRangeInput outside it, .NET's
// DateTime.MinValue being the usual culprit.
var (
	MinDateTime = time.Date(1601, time.January, 1, 0, 0, 0, 0, time.UTC)
	MaxDateTime = time.Date(9999, time.December, 31, 23, 59, 59, 999999900, time.UTC)
)

// dateTimeTick is the Edm.DateTime precision: .NET ticks of 100 ns.
const dateTimeTick = 100 * time.Nanosecond

// FormatDateTime writes t the way Azure writes Edm.DateTime values, the
// Timestamp and the ETag's datetime: UTC in the shortest round-trip form of
// .NET's "o" format with the trailing zeros of the 7-digit tick fraction
// dropped, and the fraction dropped when it is zero, e.g.
// "2020-08-20T22:20:23.751381Z" and "1973-10-04T00:00:00Z". That is what
// Azure's recorded answers show (azure-sdk-for-python
// sdk/tables/azure-data-tables/tests/recordings); the REST
// reference's examples with seven digits are written by hand. Every SDK
// parses both forms, and the Go SDK needs the literal "Z". Only the written
// form is shortened: stores keep the full 100 ns tick, and ETags are
// matched by time (tables.parseETagValue), so an ETag written with seven
// digits still names the same version.
func FormatDateTime(t time.Time) string {
	var buf [28]byte
	return string(AppendDateTime(buf[:0], t))
}

// AppendDateTime appends FormatDateTime(t) to dst.
func AppendDateTime(dst []byte, t time.Time) []byte {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		// Never stored (decoding rejects it), but stay well-formed.
		return t.AppendFormat(dst, "2006-01-02T15:04:05.9999999Z")
	}
	hour, minute, sec := t.Clock()
	ticks := t.Nanosecond() / 100
	dst = appendDigits(dst, year, 4)
	dst = append(dst, '-')
	dst = appendDigits(dst, int(month), 2)
	dst = append(dst, '-')
	dst = appendDigits(dst, day, 2)
	dst = append(dst, 'T')
	dst = appendDigits(dst, hour, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, minute, 2)
	dst = append(dst, ':')
	dst = appendDigits(dst, sec, 2)
	if ticks != 0 {
		width := 7
		for ticks%10 == 0 {
			ticks /= 10
			width--
		}
		dst = append(dst, '.')
		dst = appendDigits(dst, ticks, width)
	}
	return append(dst, 'Z')
}

// appendDigits appends v zero-padded to width digits; v must fit.
func appendDigits(dst []byte, v, width int) []byte {
	var buf [8]byte
	for i := width - 1; i >= 0; i-- {
		buf[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, buf[:width]...)
}

// ParseDateTime parses an Edm.DateTime as clients send it (ISO 8601 /
// RFC 3339): "2006-01-02T15:04:05", an optional fraction of any length, and
// "Z", a "±hh:mm" offset, or nothing (read as UTC). The result is in UTC,
// truncated to 100 ns ticks. Digits beyond the seventh are dropped, as .NET
// drops what a tick cannot hold. A malformed value is an *Error of kind
// ErrBadValue. A value outside 1601-01-01..9999-12-31 UTC is ErrOutOfRange.
func ParseDateTime(s string) (time.Time, error) {
	t, kind := parseDateTime([]byte(s))
	switch kind {
	case 0:
	case ErrOutOfRange:
		return time.Time{}, &Error{Kind: kind, Msg: "Edm.DateTime outside 1601-01-01..9999-12-31: " + quoteForMsg(s)}
	default:
		return time.Time{}, &Error{Kind: kind, Msg: "invalid Edm.DateTime " + quoteForMsg(s)}
	}
	return t, nil
}

// parseDateTime is ParseDateTime on bytes. It returns a kind instead of an
// error so the decoder can attach the property name without allocating
// twice.
func parseDateTime(b []byte) (time.Time, ErrorKind) {
	// yyyy-mm-ddThh:mm:ss is 19 bytes.
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't') || b[13] != ':' || b[16] != ':' {
		return time.Time{}, ErrBadValue
	}
	year, ok1 := digits(b[0:4])
	month, ok2 := digits(b[5:7])
	day, ok3 := digits(b[8:10])
	hour, ok4 := digits(b[11:13])
	minute, ok5 := digits(b[14:16])
	sec, ok6 := digits(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) {
		return time.Time{}, ErrBadValue
	}
	if month < 1 || month > 12 || day < 1 || day > daysIn(time.Month(month), year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, ErrBadValue
	}
	rest := b[19:]
	nsec := 0
	if len(rest) > 0 && rest[0] == '.' {
		i := 1
		scale := 100000000
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			nsec += int(rest[i]-'0') * scale
			scale /= 10
			i++
		}
		if i == 1 {
			return time.Time{}, ErrBadValue
		}
		rest = rest[i:]
	}
	offset := 0
	switch {
	case len(rest) == 0:
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, okh := digits(rest[1:3])
		om, okm := digits(rest[4:6])
		if !okh || !okm || oh > 23 || om > 59 {
			return time.Time{}, ErrBadValue
		}
		offset = (oh*60 + om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
	default:
		return time.Time{}, ErrBadValue
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	t = t.Add(-time.Duration(offset) * time.Second).Truncate(dateTimeTick)
	if t.Before(MinDateTime) || t.After(MaxDateTime) {
		return time.Time{}, ErrOutOfRange
	}
	return t, 0
}

func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(m time.Month, year int) int {
	switch m {
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case time.April, time.June, time.September, time.November:
		return 30
	}
	return 31
}
