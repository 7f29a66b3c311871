package model

import (
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
)

func TestEntityClone(t *testing.T) {
	t.Parallel()
	e := &Entity{
		PartitionKey: "p", RowKey: "r", Timestamp: time.Unix(1, 0).UTC(),
		Properties: map[string]edm.Value{"B": edm.NewBinary([]byte{1, 2}), "S": edm.NewString("x")},
	}
	c := e.Clone()
	c.Properties["B"].Bin[0] = 9
	c.Properties["S"] = edm.NewString("changed")
	c.Properties["New"] = edm.NewInt32(1)
	c.PartitionKey = "q"
	if e.Properties["B"].Bin[0] != 1 || e.Properties["S"].Str != "x" || len(e.Properties) != 2 || e.PartitionKey != "p" {
		t.Fatalf("changing the clone changed the original: %+v", e)
	}
	if !c.Timestamp.Equal(e.Timestamp) || c.RowKey != "r" {
		t.Fatalf("clone lost fields: %+v", c)
	}
	if (&Entity{}).Clone().Properties == nil {
		t.Fatal("clone of an entity without properties has a nil map")
	}
}

func TestBounds(t *testing.T) {
	t.Parallel()
	incl := func(v string) *Bound { return &Bound{Value: v, Inclusive: true} }
	excl := func(v string) *Bound { return &Bound{Value: v} }
	tests := []struct {
		name     string
		b        Bounds
		exact    string
		isExact  bool
		empty    bool
		contains []string
		excludes []string
	}{
		{"open", Bounds{}, "", false, false, []string{"", "a", "\U0010FFFF"}, nil},
		{"equality", Bounds{incl("m"), incl("m")}, "m", true, false, []string{"m"}, []string{"l", "ma", ""}},
		{"half-open range", Bounds{incl("a"), excl("b")}, "", false, false, []string{"a", "az"}, []string{"b", ""}},
		{"lower only exclusive", Bounds{Lower: excl("k")}, "", false, false, []string{"ka", "z"}, []string{"k", "a"}},
		{"upper only inclusive", Bounds{Upper: incl("k")}, "", false, false, []string{"", "k"}, []string{"ka"}},
		{"crossed", Bounds{incl("b"), incl("a")}, "", false, true, nil, []string{"a", "b"}},
		{"same value exclusive", Bounds{incl("a"), excl("a")}, "", false, true, nil, []string{"a"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, ok := tc.b.Exact()
			if v != tc.exact || ok != tc.isExact {
				t.Fatalf("Exact = (%q, %v), want (%q, %v)", v, ok, tc.exact, tc.isExact)
			}
			if got := tc.b.Empty(); got != tc.empty {
				t.Fatalf("Empty = %v, want %v", got, tc.empty)
			}
			for _, k := range tc.contains {
				if !tc.b.Contains(k) {
					t.Errorf("Contains(%q) = false, want true", k)
				}
			}
			for _, k := range tc.excludes {
				if tc.b.Contains(k) {
					t.Errorf("Contains(%q) = true, want false", k)
				}
			}
		})
	}
}

func TestKeyRangeContains(t *testing.T) {
	t.Parallel()
	r := KeyRange{
		PartitionKey: Bounds{Lower: &Bound{Value: "p", Inclusive: true}, Upper: &Bound{Value: "p", Inclusive: true}},
		RowKey:       Bounds{Lower: &Bound{Value: "r"}},
	}
	for _, tc := range []struct {
		pk, rk string
		want   bool
	}{{"p", "s", true}, {"p", "r", false}, {"q", "s", false}, {"p", "", false}} {
		if got := r.Contains(tc.pk, tc.rk); got != tc.want {
			t.Errorf("Contains(%q, %q) = %v, want %v", tc.pk, tc.rk, got, tc.want)
		}
	}
	if !(KeyRange{}).Contains("", "") {
		t.Error("an open range must contain everything")
	}
}

func TestQuoteShortensOnRuneBoundary(t *testing.T) {
	t.Parallel()
	s := strings.Repeat("a", 63) + "é" + strings.Repeat("b", 100)
	got := quote(s)
	if !strings.HasSuffix(got, `"...`) || strings.Contains(got, "\\x") || len(got) > 70 {
		t.Fatalf("quote = %s", got)
	}
}

func TestKeyRangeIntersect(t *testing.T) {
	t.Parallel()
	b := func(v string, inc bool) *Bound { return &Bound{Value: v, Inclusive: inc} }
	keys := []string{"", "a", "b", "c", "d", "e"}
	ranges := []Bounds{
		{},
		{Lower: b("b", true)},
		{Lower: b("b", false)},
		{Upper: b("d", true)},
		{Upper: b("d", false)},
		{Lower: b("b", true), Upper: b("d", false)},
		{Lower: b("c", true), Upper: b("c", true)},
		{Lower: b("a", false), Upper: b("e", true)},
	}
	// The intersection holds exactly the keys both hold, for every pair.
	for i, x := range ranges {
		for j, y := range ranges {
			got := x.Intersect(y)
			for _, k := range keys {
				if want := x.Contains(k) && y.Contains(k); got.Contains(k) != want {
					t.Errorf("ranges %d and %d: key %q in intersection = %v, want %v", i, j, k, !want, want)
				}
			}
		}
	}
	r := KeyRange{PartitionKey: Bounds{Lower: b("p", true), Upper: b("p", true)}}.
		Intersect(KeyRange{RowKey: Bounds{Upper: b("m", false)}})
	if pk, ok := r.PartitionKey.Exact(); !ok || pk != "p" || r.RowKey.Upper == nil || r.RowKey.Upper.Value != "m" {
		t.Errorf("intersection %+v lost a side", r)
	}
}
