package memstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRowsAgainstSortedSlice puts and removes thousands of random keys, so
// chunks split and empty many times, and compares every walk with a plain
// sorted slice of the same keys.
func TestRowsAgainstSortedSlice(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	var r rows
	want := map[key]bool{}
	for step := range 20_000 {
		k := key{fmt.Sprintf("p%02d", rng.IntN(40)), fmt.Sprintf("r%04d", rng.IntN(300))}
		if rng.IntN(3) == 0 {
			if got := r.remove(k); got != want[k] {
				t.Fatalf("step %d: remove(%v) = %v; want %v", step, k, got, want[k])
			}
			delete(want, k)
			if x := r.get(k); x != nil {
				t.Fatalf("step %d: get(%v) after remove = %v", step, k, x)
			}
		} else {
			r.put(&row{key: k})
			want[k] = true
		}
		if step%997 == 0 || step == 19_999 {
			checkRows(t, &r, want)
		}
	}
}

func checkRows(t *testing.T, r *rows, want map[key]bool) {
	t.Helper()
	sorted := make([]key, 0, len(want))
	for k := range want {
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, compareKeys)
	var got []key
	for p := (pos{}); r.at(p) != nil; p = r.next(p) {
		got = append(got, r.at(p).key)
	}
	if !slices.Equal(got, sorted) {
		t.Fatalf("walk gives %d keys, want %d, or out of order", len(got), len(sorted))
	}
	for _, c := range r.chunks {
		if len(c) == 0 || len(c) > maxChunk {
			t.Fatalf("chunk of %d rows; want 1 to %d", len(c), maxChunk)
		}
	}
	for _, k := range sorted {
		if x := r.get(k); x == nil || x.key != k {
			t.Fatalf("get(%v) = %v", k, x)
		}
	}
	if len(r.byKey) != len(sorted) {
		t.Fatalf("the map holds %d rows; the chunks %d", len(r.byKey), len(sorted))
	}
}
