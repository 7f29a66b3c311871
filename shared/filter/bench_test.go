package filter

import (
	"testing"
)

const benchFilter = "PartitionKey eq 'pk1' and RowKey ge 'rk' and Age gt 20 and (Name eq 'Bob' or IsActive) and Timestamp gt datetime'2020-01-01T00:00:00Z'"

func TestMatchDoesNotAllocate(t *testing.T) {
	f, err := Parse(benchFilter)
	if err != nil {
		t.Fatal(err)
	}
	e := sampleEntity()
	if !f.Match(e) {
		t.Fatal("the benchmark filter does not match its entity")
	}
	if allocs := testing.AllocsPerRun(1000, func() { f.Match(e) }); allocs != 0 {
		t.Errorf("Match allocates %.1f times per call, want 0", allocs)
	}
}

func BenchmarkMatch(b *testing.B) {
	f, err := Parse(benchFilter)
	if err != nil {
		b.Fatal(err)
	}
	e := sampleEntity()
	b.ReportAllocs()
	for b.Loop() {
		f.Match(e)
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(benchFilter); err != nil {
			b.Fatal(err)
		}
	}
}
