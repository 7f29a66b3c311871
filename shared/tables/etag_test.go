package tables

import (
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/store"
)

func TestETagRoundTrip(t *testing.T) {
	t.Parallel()
	ts := time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)
	got := ETag(ts)
	const want = `W/"datetime'2024-12-23T09%3A20%3A10.1623783Z'"`
	if got != want {
		t.Fatalf("ETag = %s, want %s", got, want)
	}
	if esc := string(AppendETag(nil, ts, true)); esc != `W/\"datetime'2024-12-23T09%3A20%3A10.1623783Z'\"` {
		t.Fatalf("escaped ETag = %s", esc)
	}
	for _, edge := range []time.Time{
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
		time.Date(2024, 2, 29, 23, 59, 59, 100, time.FixedZone("x", 3600)),
	} {
		want := `W/"datetime'` + strings.ReplaceAll(edge.UTC().Format("2006-01-02T15:04:05.9999999Z"), ":", "%3A") + `'"`
		if got := ETag(edge); got != want {
			t.Errorf("ETag(%v) = %s, want %s", edge, got, want)
		}
	}
	kind, back, err := condition(got)
	if err != nil || kind != store.CondTimestamp || !back.Equal(ts) {
		t.Fatalf("condition(%s) = %v, %v, %v", got, kind, back, err)
	}
}

// TestETagShortestForm: Azure writes the ETag's datetime in its shortest
// form, W/"datetime'2020-10-01T00%3A38%3A36.310293Z'" in azure-sdk-for-js
// sdk/tables/data-tables/recordings/node/tableclient_listentities/recording_should_list_by_page.js.
// An ETag issued before tablebridge wrote that form, with all
// seven digits, names the same version: both parse to one condition time.
func TestETagShortestForm(t *testing.T) {
	t.Parallel()
	ts := time.Date(2020, 8, 20, 22, 20, 23, 751381000, time.UTC)
	const want = `W/"datetime'2020-08-20T22%3A20%3A23.751381Z'"`
	if got := ETag(ts); got != want {
		t.Fatalf("ETag = %s, want %s", got, want)
	}
	if got := ETag(time.Date(1973, 10, 4, 0, 0, 0, 0, time.UTC)); got != `W/"datetime'1973-10-04T00%3A00%3A00Z'"` {
		t.Fatalf("ETag of a whole second = %s", got)
	}
	for _, etag := range []string{want, `W/"datetime'2020-08-20T22%3A20%3A23.7513810Z'"`} {
		kind, at, err := condition(etag)
		if err != nil || kind != store.CondTimestamp || !at.Equal(ts) {
			t.Errorf("condition(%s) = %v, %v, %v; want the Timestamp %v", etag, kind, at, err, ts)
		}
	}
}

// TestCondition covers "Specifying conditional headers for Table service
// operations": If-Match is "*" or a weak ETag (W/ in either case, RFC 7232);
// a weak ETag that names no Timestamp of this service is a condition that
// fails (412 UpdateConditionNotSatisfied on Azure), while a strong ETag, a
// list or anything else is 400 InvalidInput.
func TestCondition(t *testing.T) {
	t.Parallel()
	ts := time.Date(2015, 1, 1, 23, 14, 33, 498000000, time.UTC)
	for _, tc := range []struct {
		ifMatch string
		kind    store.CondKind
		at      time.Time
	}{
		{"", store.CondNone, time.Time{}},
		{"*", store.CondExists, time.Time{}},
		{`W/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, store.CondTimestamp, ts},
		{`w/"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, store.CondTimestamp, ts},
		{`W/"datetime'2015-01-01T23:14:33.498Z'"`, store.CondTimestamp, ts},
		{`W/"datetime'2015-01-01T23%3a14%3a33.498Z'"`, store.CondTimestamp, ts},
		{`W/"wrong"`, store.CondTimestamp, unmatchableTimestamp},
		{`w/"wrong"`, store.CondTimestamp, unmatchableTimestamp},
		{`W/""`, store.CondTimestamp, unmatchableTimestamp},
		{`W/"datetime'nope'"`, store.CondTimestamp, unmatchableTimestamp},
	} {
		kind, at, err := condition(tc.ifMatch)
		if err != nil || kind != tc.kind || !at.Equal(tc.at) {
			t.Errorf("condition(%s) = %v, %v, %v; want %v, %v", tc.ifMatch, kind, at, err, tc.kind, tc.at)
		}
	}
	for _, bad := range []string{
		`"datetime'2015-01-01T23%3A14%3A33.4980000Z'"`, // strong
		`"wrong"`, "wrong", "W/", `W/"`, `W/wrong`, `W/"datetime'2015-01-01T23:14:33Z'`,
		`W/"a", W/"b"`, `W/"a",W/"b"`, "**", " *",
	} {
		if _, _, err := condition(bad); !isCode(err, apierr.InvalidInput) {
			t.Errorf("condition(%s) = %v, want InvalidInput", bad, err)
		}
	}
}

func TestClockStrictlyIncreases(t *testing.T) {
	t.Parallel()
	fixed := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	c := &clock{now: func() time.Time { return fixed }}
	prev := c.next()
	for i := 0; i < 1000; i++ {
		next := c.next()
		if !next.After(prev) {
			t.Fatalf("timestamp %v not after %v", next, prev)
		}
		if next.Sub(prev) != tick {
			t.Fatalf("step %v, want %v", next.Sub(prev), tick)
		}
		prev = next
	}
}

func isCode(err error, code apierr.Code) bool {
	e, ok := apierr.As(err)
	return ok && e.Code == code
}
