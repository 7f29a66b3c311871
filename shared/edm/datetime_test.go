package edm

import (
	"errors"
	"testing"
	"time"
)

func TestParseDateTime(t *testing.T) {
	t.Parallel()
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) time.Time {
		return time.Date(y, mo, d, h, mi, s, ns, time.UTC)
	}
	tests := []struct {
		name string
		in   string
		want time.Time
		kind ErrorKind
	}{
		{"Z with seven digits", "2024-12-23T09:20:10.1623783Z", utc(2024, 12, 23, 9, 20, 10, 162378300), 0},
		{"Z without fraction", "2008-07-10T00:00:00Z", utc(2008, 7, 10, 0, 0, 0, 0), 0},
		{"milliseconds (JavaScript)", "2020-09-17T00:00:00.111Z", utc(2020, 9, 17, 0, 0, 0, 111000000), 0},
		{"microseconds (Python)", "2020-09-17T00:00:00.123456Z", utc(2020, 9, 17, 0, 0, 0, 123456000), 0},
		{"one digit", "2020-09-17T00:00:00.5Z", utc(2020, 9, 17, 0, 0, 0, 500000000), 0},
		{"nine digits truncated to ticks", "2020-09-17T00:00:00.123456789Z", utc(2020, 9, 17, 0, 0, 0, 123456700), 0},
		{"twelve digits", "2020-09-17T00:00:00.123456789999Z", utc(2020, 9, 17, 0, 0, 0, 123456700), 0},
		{"lower case t and z", "2020-09-17t01:02:03z", utc(2020, 9, 17, 1, 2, 3, 0), 0},
		{"no zone is UTC", "2020-09-17T01:02:03", utc(2020, 9, 17, 1, 2, 3, 0), 0},
		{"positive offset", "2020-09-17T01:02:03+02:00", utc(2020, 9, 16, 23, 2, 3, 0), 0},
		{"negative offset", "2020-09-17T23:30:00.25-01:30", utc(2020, 9, 18, 1, 0, 0, 250000000), 0},
		{"leap day", "2024-02-29T00:00:00Z", utc(2024, 2, 29, 0, 0, 0, 0), 0},
		{"range start", "1601-01-01T00:00:00Z", MinDateTime, 0},
		{"range end", "9999-12-31T23:59:59.9999999Z", MaxDateTime, 0},
		{"before range", "1600-12-31T23:59:59.9999999Z", time.Time{}, ErrOutOfRange},
		{"DateTime.MinValue", "0001-01-01T00:00:00Z", time.Time{}, ErrOutOfRange},
		{"offset pushes below range", "1601-01-01T00:00:00+00:01", time.Time{}, ErrOutOfRange},
		{"offset pushes above range", "9999-12-31T23:00:00-01:00", time.Time{}, ErrOutOfRange},
		{"offset pulls into range", "1600-12-31T23:30:00-00:30", MinDateTime, 0},
		{"not a leap year", "2023-02-29T00:00:00Z", time.Time{}, ErrBadValue},
		{"century not leap", "1900-02-29T00:00:00Z", time.Time{}, ErrBadValue},
		{"April 31", "2024-04-31T00:00:00Z", time.Time{}, ErrBadValue},
		{"month 13", "2024-13-01T00:00:00Z", time.Time{}, ErrBadValue},
		{"day 0", "2024-01-00T00:00:00Z", time.Time{}, ErrBadValue},
		{"hour 24", "2024-01-01T24:00:00Z", time.Time{}, ErrBadValue},
		{"leap second", "2016-12-31T23:59:60Z", time.Time{}, ErrBadValue},
		{"minute 60", "2016-12-31T23:60:00Z", time.Time{}, ErrBadValue},
		{"date only", "2024-01-01", time.Time{}, ErrBadValue},
		{"space for T", "2024-01-01 00:00:00Z", time.Time{}, ErrBadValue},
		{"two digit year", "24-01-01T00:00:00Z", time.Time{}, ErrBadValue},
		{"dot without digits", "2024-01-01T00:00:00.Z", time.Time{}, ErrBadValue},
		{"offset without colon", "2024-01-01T00:00:00+0100", time.Time{}, ErrBadValue},
		{"offset hour 24", "2024-01-01T00:00:00+24:00", time.Time{}, ErrBadValue},
		{"trailing data", "2024-01-01T00:00:00Zjunk", time.Time{}, ErrBadValue},
		{"sign in year", "+024-01-01T00:00:00Z", time.Time{}, ErrBadValue},
		{"empty", "", time.Time{}, ErrBadValue},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDateTime(tc.in)
			if tc.kind != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Kind != tc.kind {
					t.Fatalf("ParseDateTime(%q) error = %v, want kind %v", tc.in, err, tc.kind)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseDateTime(%q): %v", tc.in, err)
			}
			if !got.Equal(tc.want) || got.Location() != time.UTC {
				t.Fatalf("ParseDateTime(%q) = %v, want %v in UTC", tc.in, got, tc.want)
			}
		})
	}
}

func TestFormatDateTime(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   time.Time
		want string
	}{
		{"seven digits", time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC), "2024-12-23T09:20:10.1623783Z"},
		// Azure drops the fraction's trailing zeros: "Timestamp":
		// "2020-10-01T00:38:36.310293Z" in azure-sdk-for-js
		// sdk/tables/data-tables/recordings/node/tableclient_listentities/recording_should_list_by_page.js.
		{"trailing zeros dropped", time.Date(2020, 10, 1, 0, 38, 36, 310293000, time.UTC), "2020-10-01T00:38:36.310293Z"},
		{"one digit", time.Date(2020, 1, 1, 0, 0, 0, 500000000, time.UTC), "2020-01-01T00:00:00.5Z"},
		// ... and the whole fraction when it is zero: "Birthday":
		// "1973-10-04T00:00:00Z" in Azure/azure-cosmos-table-python
		// azure-cosmosdb-table/tests/recordings/test_table_entity.test_get_entity.yaml.
		{"zero fraction dropped", time.Date(2008, 7, 10, 0, 0, 0, 0, time.UTC), "2008-07-10T00:00:00Z"},
		{"converted to UTC", time.Date(2020, 1, 1, 1, 0, 0, 0, time.FixedZone("CET", 3600)), "2020-01-01T00:00:00Z"},
		{"sub-tick truncated", time.Date(2020, 1, 1, 0, 0, 0, 199, time.UTC), "2020-01-01T00:00:00.0000001Z"},
		{"sub-tick only", time.Date(2020, 1, 1, 0, 0, 0, 99, time.UTC), "2020-01-01T00:00:00Z"},
		{"range start", MinDateTime, "1601-01-01T00:00:00Z"},
		{"range end", MaxDateTime, "9999-12-31T23:59:59.9999999Z"},
		{"zero time stays well-formed", time.Time{}, "0001-01-01T00:00:00Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := FormatDateTime(tc.in); got != tc.want {
				t.Fatalf("FormatDateTime = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestDateTimeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []time.Time{
		MinDateTime, MaxDateTime,
		time.Date(2024, 2, 29, 23, 59, 59, 999999900, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 100, time.UTC),
	} {
		t.Run(FormatDateTime(in), func(t *testing.T) {
			got, err := ParseDateTime(FormatDateTime(in))
			if err != nil || !got.Equal(in) {
				t.Fatalf("round trip = %v, %v; want %v", got, err, in)
			}
		})
	}
}
