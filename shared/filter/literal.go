package filter

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/tablebridge/tablebridge/shared/edm"
)

// This file converts literal text to values and values back to canonical
// literal text. The lexer has already checked the character classes, so
// the number parsers see only [-]digits[.digits][e[+-]digits].

func parseInt32(s string) (int32, error) {
	v, err := strconv.ParseInt(s, 10, 32)
	if err != nil {
		// The Table service (WCF Data Services) does not widen an
		// unsuffixed integer that overflows Int32; it rejects it.
		return 0, fmt.Errorf("Int32 literal %s is out of range (append L for an Int64)", s)
	}
	return int32(v), nil
}

func parseInt64(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("Int64 literal %sL is out of range", s)
	}
	return v, nil
}

func parseDouble(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	// ParseFloat reports overflow as ±Inf with ErrRange; .NET Framework's
	// Double.Parse throws there too. Underflow to zero is accepted by both.
	if err != nil && math.IsInf(v, 0) {
		return 0, fmt.Errorf("the Double literal %s is out of range", s)
	}
	return v, nil
}

var errDateTime = errors.New(`invalid datetime literal: want yyyy-MM-ddTHH:mm:ss[.fffffff][Z|±hh:mm]`)

// parseDateTime reads the body of datetime'...' the way .NET's
// XmlConvert.ToDateTime does for the forms that carry a date: surrounding
// whitespace is allowed, a missing zone means UTC (the service compares
// ticks), an offset is converted to UTC, and digits beyond the seventh
// fractional one are rounded half to even into 100 ns ticks. The result must
// lie in .NET's DateTime range, years 1 to 9999.
func parseDateTime(s string) (time.Time, error) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, errDateTime
	}
	year, ok1 := atoi(s[0:4])
	month, ok2 := atoi(s[5:7])
	day, ok3 := atoi(s[8:10])
	if !ok1 || !ok2 || !ok3 || year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) {
		return time.Time{}, errDateTime
	}
	var hour, minute, second int
	var ticks int64 // 100 ns units within the second
	i := 10
	if i < len(s) && s[i] == 'T' {
		if len(s) < 19 || s[13] != ':' || s[16] != ':' {
			return time.Time{}, errDateTime
		}
		var ok4, ok5, ok6 bool
		hour, ok4 = atoi(s[11:13])
		minute, ok5 = atoi(s[14:16])
		second, ok6 = atoi(s[17:19])
		if !ok4 || !ok5 || !ok6 || hour > 23 || minute > 59 || second > 59 {
			return time.Time{}, errDateTime
		}
		i = 19
		if i < len(s) && s[i] == '.' {
			j := i + 1
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j == i+1 {
				return time.Time{}, errDateTime
			}
			ticks = fractionTicks(s[i+1 : j])
			i = j
		}
	}
	var offset time.Duration // east of UTC
	if i < len(s) {
		switch s[i] {
		case 'Z', 'z':
			i++
		case '+', '-':
			if len(s)-i != 6 || s[i+3] != ':' {
				return time.Time{}, errDateTime
			}
			hh, ok1 := atoi(s[i+1 : i+3])
			mm, ok2 := atoi(s[i+4 : i+6])
			if !ok1 || !ok2 || mm > 59 || hh*60+mm > 14*60 {
				return time.Time{}, errDateTime
			}
			offset = time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute
			if s[i] == '-' {
				offset = -offset
			}
			i += 6
		}
	}
	if i != len(s) {
		return time.Time{}, errDateTime
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	t = t.Add(time.Duration(ticks)*100 - offset)
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("datetime literal %s is outside the years 1 to 9999", s)
	}
	return t, nil
}

// fractionTicks keeps the first 7 fractional digits and rounds on the rest
// half to even, as .NET's XsdDateTime parser does. A carry into the next
// second comes out as 10,000,000 ticks, which time.Add handles.
func fractionTicks(frac string) int64 {
	var ticks int64
	for k := range 7 {
		ticks *= 10
		if k < len(frac) {
			ticks += int64(frac[k] - '0')
		}
	}
	if len(frac) > 7 {
		rest := frac[7:]
		switch {
		case rest[0] > '5':
			ticks++
		case rest[0] == '5':
			if strings.TrimRight(rest[1:], "0") != "" || ticks%2 == 1 {
				ticks++
			}
		}
	}
	return ticks
}

func daysIn(year, month int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// atoi parses a fixed-width run of ASCII digits.
func atoi(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, len(s) > 0
}

// parseBinary decodes the hexadecimal body of X'...' or binary'...'. It
// returns a non-nil slice even when empty: an empty binary literal is a
// value, not "absent".
func parseBinary(s string) ([]byte, error) {
	if len(s)%2 != 0 {
		return nil, fmt.Errorf("invalid binary literal %q: odd number of hexadecimal digits", s)
	}
	b := make([]byte, len(s)/2)
	if _, err := hex.Decode(b, []byte(s)); err != nil {
		return nil, fmt.Errorf("invalid binary literal %q: not hexadecimal", s)
	}
	return b, nil
}

// formatLiteral writes v in the canonical form Parse reads back to the same
// value: the type is always visible (30 is Int32, 30L Int64, 30.0 Double).
func formatLiteral(b *strings.Builder, v edm.Value) {
	switch v.Type {
	case edm.String:
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(v.Str, "'", "''"))
		b.WriteByte('\'')
	case edm.Boolean:
		b.WriteString(strconv.FormatBool(v.Bool))
	case edm.Int32:
		b.WriteString(strconv.FormatInt(v.Int, 10))
	case edm.Int64:
		b.WriteString(strconv.FormatInt(v.Int, 10))
		b.WriteByte('L')
	case edm.Double:
		b.WriteString(formatDouble(v.Float))
	case edm.DateTime:
		b.WriteString("datetime'")
		b.WriteString(v.Time.UTC().Format("2006-01-02T15:04:05.9999999Z07:00"))
		b.WriteByte('\'')
	case edm.Guid:
		b.WriteString("guid'")
		b.WriteString(v.Str)
		b.WriteByte('\'')
	case edm.Binary:
		b.WriteString("X'")
		b.WriteString(hex.EncodeToString(v.Bin))
		b.WriteByte('\'')
	default:
		b.WriteString(v.Type.String())
	}
}

func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0" // keep integral doubles visibly Double
	}
	return s
}
