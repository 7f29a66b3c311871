package migrate

import (
	"context"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// Splitting a table into PartitionKey ranges.
//
// Azure has no call that lists a table's partitions or counts its rows, so a
// migration first reads the table once with $select=PartitionKey,RowKey (the
// discovery pass). That pass is cheap, keys only, and it yields two things:
//   - the entity count, which makes the progress bar's ETA possible;
//   - a sample of partition keys from which the split points are chosen so
//     that each range holds about the same number of entities.
//
// The sample is bounded: every stride-th entity's PartitionKey is kept, and
// when the sample reaches twice its target size every other one is dropped
// and the stride doubles. Sorted, its quantiles are the split points. A split
// point is a PartitionKey, so a partition is never divided and every range is
// "PartitionKey ge 'a' and PartitionKey lt 'b'", which Azure answers with a
// range scan. The ranges cover the whole key space (the first starts at '',
// the last is unbounded), so nothing can fall between them whatever was
// written since the discovery pass.
//
// Split points must sort the same way on the server as here, or two ranges
// could overlap or leave a gap. Go orders strings by UTF-8 bytes, which is
// code point order; Azure, Azurite (JavaScript) and .NET may order by UTF-16
// code units instead. The two orders disagree only between a character in
// U+E000..U+FFFF and one above U+FFFF, so a split point is kept only if it is
// greater than the previous one in both orders.
//
// A DynamoDB-backed tablebridge (and Cosmos DB) scans partitions in hash
// order and cannot seek to a PartitionKey range: there every range is a full
// scan filtered on the server, so -ranges 1 is the right choice for such a
// source. The sample still works (hash order is a fair sample), and so does
// the count.

// discovery is the result of the discovery pass.
type discovery struct {
	total  int64
	splits []string
}

// sampleTarget is how many partition keys the discovery pass keeps per
// range it is asked for; more makes the quantiles steadier.
const sampleTarget = 256

// minPagesPerRange keeps small tables in one range: a range of fewer pages
// costs more requests than it saves.
const minPagesPerRange = 2

// sampler keeps every stride-th key, halving itself when full.
type sampler struct {
	target int
	stride int64
	seen   int64
	keys   []string
}

func newSampler(target int) *sampler {
	return &sampler{target: max(target, 1), stride: 1}
}

func (s *sampler) add(pk string) {
	if s.seen%s.stride == 0 {
		s.keys = append(s.keys, pk)
		if len(s.keys) >= 2*s.target {
			kept := s.keys[:0]
			for i := 0; i < len(s.keys); i += 2 {
				kept = append(kept, s.keys[i])
			}
			clear(s.keys[len(kept):])
			s.keys = kept
			s.stride *= 2
		}
	}
	s.seen++
}

// splits returns up to n-1 split points: the sample's quantiles, strictly
// increasing in both code point and UTF-16 order, never "".
func (s *sampler) splits(n int) []string {
	if n <= 1 || len(s.keys) == 0 {
		return nil
	}
	keys := slices.Clone(s.keys)
	slices.Sort(keys)
	var out []string
	for i := 1; i < n; i++ {
		k := keys[i*len(keys)/n]
		if k == "" {
			continue
		}
		if len(out) > 0 {
			prev := out[len(out)-1]
			if !(prev < k) || !utf16Less(prev, k) {
				continue
			}
		}
		out = append(out, k)
	}
	return out
}

// utf16Less orders strings by UTF-16 code units, as JavaScript and .NET
// ordinal comparison do.
func utf16Less(a, b string) bool {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return utf16Unit(ra) < utf16Unit(rb)
		}
		a, b = a[na:], b[nb:]
	}
	return a == "" && b != ""
}

// utf16Unit maps r to a number that orders runes as their UTF-16 code unit
// sequences do: a BMP character is its one unit, shifted, and a character
// above U+FFFF is its surrogate pair (high, low). High surrogates
// (U+D800..U+DBFF) sort below U+E000..U+FFFF, which is where the two orders
// part.
func utf16Unit(r rune) int64 {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return int64(hi)<<16 | int64(lo)
	}
	return int64(r) << 16
}

// rangesFrom turns split points into ranges that cover the key space.
func rangesFrom(splits []string) []Range {
	ranges := make([]Range, 0, len(splits)+1)
	lower := ""
	for _, s := range splits {
		ranges = append(ranges, Range{Lower: lower, Upper: s})
		lower = s
	}
	return append(ranges, Range{Lower: lower})
}

// discover runs the discovery pass over a table: it counts the entities and,
// when the source can scan ranges and n > 1, picks up to n-1 split points,
// fewer for a table too small to fill n ranges of minPagesPerRange pages.
// onPage reports the keys read so far, for progress.
func discover(ctx context.Context, src Source, n, pageSize int, read func(ctx context.Context, req PageRequest) (Page, error), onPage func(int)) (discovery, error) {
	smp := newSampler(sampleTarget * max(n, 1))
	var d discovery
	req := PageRequest{Top: pageSize, KeysOnly: true}
	for {
		page, err := read(ctx, req)
		if err != nil {
			return discovery{}, err
		}
		for _, e := range page.Entities {
			smp.add(e.PartitionKey)
		}
		d.total += int64(len(page.Entities))
		if onPage != nil {
			onPage(len(page.Entities))
		}
		if page.Next == nil {
			break
		}
		req.After = page.Next
	}
	if src.SplitsRanges() && n > 1 {
		n = min(n, int(d.total/int64(minPagesPerRange*pageSize)))
		d.splits = smp.splits(n)
	}
	return d, nil
}
