package tables

import (
	"strings"
	"testing"
	"time"
)

func TestETagRoundTrip(t *testing.T) {
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
		want := `W/"datetime'` + strings.ReplaceAll(edge.UTC().Format("2006-01-02T15:04:05.0000000Z"), ":", "%3A") + `'"`
		if got := ETag(edge); got != want {
			t.Errorf("ETag(%v) = %s, want %s", edge, got, want)
		}
	}
	back, ok := parseETag(got)
	if !ok || !back.Equal(ts) {
		t.Fatalf("parseETag = %v, %v", back, ok)
	}
	for _, bad := range []string{"", "*", `"abc"`, `W/"datetime'nope'"`, `W/"datetime'2024-12-23T09:20:10Z'`} {
		if _, ok := parseETag(bad); ok {
			t.Errorf("parseETag(%q) accepted", bad)
		}
	}
}

func TestClockStrictlyIncreases(t *testing.T) {
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
