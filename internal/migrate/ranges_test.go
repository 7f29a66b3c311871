package migrate

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"unicode/utf16"

	"github.com/tablebridge/tablebridge/shared/model"
)

func TestRangeFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		r    Range
		want string
	}{
		{Range{}, ""},
		{Range{Lower: "a"}, "PartitionKey ge 'a'"},
		{Range{Upper: "m"}, "PartitionKey lt 'm'"},
		{Range{Lower: "it's", Upper: "z''"}, "PartitionKey ge 'it''s' and PartitionKey lt 'z'''''"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.r.Filter(); got != tt.want {
				t.Fatalf("Filter() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRangeContainsAndKeyRange(t *testing.T) {
	t.Parallel()
	r := Range{Lower: "b", Upper: "d"}
	for pk, want := range map[string]bool{"a": false, "b": true, "c": true, "czz": true, "d": false, "e": false} {
		if r.Contains(pk) != want {
			t.Errorf("Contains(%q) = %v", pk, !want)
		}
		kr := r.KeyRange()
		if kr.PartitionKey.Contains(pk) != want {
			t.Errorf("KeyRange().Contains(%q) = %v", pk, !want)
		}
	}
	if !(Range{}).Whole() || !(Range{}).Contains("") || (Range{Lower: "a"}).Whole() {
		t.Error("Whole or Contains wrong for open ranges")
	}
	if kr := (Range{}).KeyRange(); kr.PartitionKey.Lower != nil || kr.PartitionKey.Upper != nil {
		t.Error("whole range has bounds")
	}
}

func TestRangesFromCoverEverything(t *testing.T) {
	t.Parallel()
	ranges := rangesFrom([]string{"f", "m", "t"})
	want := []Range{{Lower: "", Upper: "f"}, {Lower: "f", Upper: "m"}, {Lower: "m", Upper: "t"}, {Lower: "t"}}
	if !slices.Equal(ranges, want) {
		t.Fatalf("rangesFrom = %v, want %v", ranges, want)
	}
	for _, pk := range []string{"", "a", "f", "ff", "m", "s", "t", "zzz", "\U0010FFFF"} {
		n := 0
		for _, r := range ranges {
			if r.Contains(pk) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q is in %d ranges, want exactly 1", pk, n)
		}
	}
	if got := rangesFrom(nil); !slices.Equal(got, []Range{{}}) {
		t.Errorf("rangesFrom(nil) = %v, want the whole table", got)
	}
}

func TestUTF16Less(t *testing.T) {
	t.Parallel()
	// U+FF01 and U+1F600: code point order says FF01 first; UTF-16 code
	// units (FF01 vs D83D DE00) say the emoji first.
	if !("\uFF01" < "\U0001F600") || utf16Less("\uFF01", "\U0001F600") || !utf16Less("\U0001F600", "\uFF01") {
		t.Fatal("UTF-16 order must put U+1F600 before U+FF01")
	}
	words := []string{"", "a", "ab", "b", "\u00e9", "\uE000", "\uFFFF", "\U00010000", "\U0001F600", "\U0010FFFF", "\U0001F600a", "\uD7FF"}
	for _, a := range words {
		for _, b := range words {
			want := slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b))) < 0
			if got := utf16Less(a, b); got != want {
				t.Errorf("utf16Less(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
	}
}

func TestSamplerSplits(t *testing.T) {
	t.Parallel()
	t.Run("even quantiles of sorted input", func(t *testing.T) {
		s := newSampler(64)
		for i := range 10000 {
			s.add(fmt.Sprintf("p%05d", i))
		}
		if len(s.keys) >= 128 {
			t.Fatalf("sample holds %d keys, want under 128", len(s.keys))
		}
		splits := s.splits(4)
		if len(splits) != 3 {
			t.Fatalf("splits = %v, want 3", splits)
		}
		for i, want := range []int{2500, 5000, 7500} {
			var got int
			fmt.Sscanf(splits[i], "p%05d", &got)
			if got < want-300 || got > want+300 {
				t.Errorf("split %d = %s, want near p%05d", i, splits[i], want)
			}
		}
	})
	t.Run("one partition cannot split", func(t *testing.T) {
		s := newSampler(16)
		for range 1000 {
			s.add("same")
		}
		if got := s.splits(4); len(got) != 1 || got[0] != "same" {
			// [ "", "same" ) is empty and [ "same", ...) holds everything:
			// harmless, and a range of its own.
			t.Fatalf("splits = %v", got)
		}
	})
	t.Run("never the empty key", func(t *testing.T) {
		s := newSampler(16)
		for range 100 {
			s.add("")
		}
		s.add("z")
		for _, k := range s.splits(8) {
			if k == "" {
				t.Fatal("split at the empty key")
			}
		}
	})
	t.Run("strictly increasing in both orders", func(t *testing.T) {
		s := newSampler(64)
		keys := []string{"\uFF01", "\U0001F600", "a", "\uE000", "\U00010000", "b", "\uFFFD", "\U0010FFFF"}
		for i := range 4000 {
			s.add(keys[i%len(keys)] + fmt.Sprint(i%7))
		}
		splits := s.splits(16)
		for i := 1; i < len(splits); i++ {
			if !(splits[i-1] < splits[i]) || !utf16Less(splits[i-1], splits[i]) {
				t.Fatalf("splits %q, %q are out of order in one of the orders", splits[i-1], splits[i])
			}
		}
	})
	t.Run("no splits asked", func(t *testing.T) {
		s := newSampler(4)
		s.add("a")
		if got := s.splits(1); got != nil {
			t.Fatalf("splits(1) = %v", got)
		}
		if got := newSampler(4).splits(4); got != nil {
			t.Fatalf("empty sampler splits = %v", got)
		}
	})
}

// pagedSource serves sorted keys in pages, for discover.
type pagedSource struct {
	keys   []string
	splits bool
}

func (p *pagedSource) Tables(context.Context) ([]string, error) { return []string{"t"}, nil }
func (p *pagedSource) SplitsRanges() bool                       { return p.splits }
func (p *pagedSource) Describe() string                         { return "paged" }
func (p *pagedSource) ReadPage(_ context.Context, _ string, req PageRequest) (Page, error) {
	start := 0
	if req.After != nil {
		start = int(req.After.Offset)
	}
	end := min(start+req.Top, len(p.keys))
	var page Page
	for _, k := range p.keys[start:end] {
		page.Entities = append(page.Entities, &model.Entity{PartitionKey: k})
	}
	if end < len(p.keys) {
		page.Next = &Continuation{Offset: int64(end)}
	}
	return page, nil
}

func TestDiscover(t *testing.T) {
	t.Parallel()
	var keys []string
	for i := range 9000 {
		keys = append(keys, fmt.Sprintf("p%03d", i/10))
	}
	sort.Strings(keys)
	for _, tt := range []struct {
		name       string
		splits     bool
		n          int
		wantRanges int
	}{
		{"splits into four", true, 4, 4},
		{"capped by table size", true, 64, 9000 / (minPagesPerRange * MaxPageSize)},
		{"one range asked", true, 1, 1},
		{"source cannot split", false, 4, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			src := &pagedSource{keys: keys, splits: tt.splits}
			pages := 0
			d, err := discover(context.Background(), src, tt.n, MaxPageSize, func(ctx context.Context, req PageRequest) (Page, error) {
				if !req.KeysOnly {
					t.Error("discovery must ask for keys only")
				}
				return src.ReadPage(ctx, "t", req)
			}, func(int) { pages++ })
			if err != nil {
				t.Fatal(err)
			}
			if d.total != 9000 || pages != 9 {
				t.Errorf("total %d over %d pages, want 9000 over 9", d.total, pages)
			}
			if got := len(rangesFrom(d.splits)); got != tt.wantRanges {
				t.Errorf("%d ranges (splits %v), want %d", got, d.splits, tt.wantRanges)
			}
		})
	}
	t.Run("read error", func(t *testing.T) {
		_, err := discover(context.Background(), &pagedSource{}, 4, MaxPageSize, func(context.Context, PageRequest) (Page, error) {
			return Page{}, fmt.Errorf("boom")
		}, nil)
		if err == nil {
			t.Fatal("no error")
		}
	})
}
