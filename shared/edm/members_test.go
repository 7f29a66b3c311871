package edm

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func wantTooMany(t *testing.T, body string) {
	t.Helper()
	var e *Error
	err := DecodeObject([]byte(body), func(string, Value, bool) error {
		t.Fatal("the callback ran for a body past the member bounds")
		return nil
	})
	if !errors.As(err, &e) || e.Kind != ErrTooManyMembers {
		t.Fatalf("got %v, want ErrTooManyMembers", err)
	}
}

// How many properties an entity may have is the model's bound (see
// shared/model); the decoder bounds only the members it scans.
func TestDecodeObjectMemberBounds(t *testing.T) {
	t.Parallel()
	t.Run("members at the bound", func(t *testing.T) {
		got, err := decodeAll(largeObject(MaxMembers-1, `"last":null`))
		if err != nil || len(got) != MaxMembers {
			t.Fatalf("%d members, %v", len(got), err)
		}
	})
	t.Run("members past the bound", func(t *testing.T) {
		var b strings.Builder
		b.WriteByte('{')
		for i := range MaxMembers + 1 {
			fmt.Fprintf(&b, `"p%d@some.term":1,`, i)
		}
		b.WriteString(`"x":1}`)
		wantTooMany(t, b.String())
	})
	t.Run("a syntax error past the bound is not reached", func(t *testing.T) {
		wantTooMany(t, largeObject(MaxMembers+1, `"broken"`))
	})
}

// hostileEntity is an entity body built to cost the most within the 4 MiB
// request bound: about 4 MiB of 358,000 one-character-named properties.
func hostileEntity() []byte {
	var b strings.Builder
	b.WriteByte('{')
	for i := range 358_000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%c":%d`, 'a'+i%26, i%10)
	}
	b.WriteByte('}')
	return []byte(b.String())
}

// The decoder stops at the bound: refusing a 4 MiB body of 358,000 members
// allocates no more than a legal entity does, independent of the body size.
// The bound is on bytes, not allocation counts: under the race detector
// sync.Pool drops a share of what is put back at random, so how often a
// decoder is built afresh (a dozen allocations growing its member slice to
// the bound) varies from run to run, while what it costs stays far below
// the body.
func TestDecodeObjectHostileBodyAllocatesLittle(t *testing.T) {
	body := hostileEntity()
	fn := func(string, Value, bool) error { return nil }
	const runs = 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		if err := DecodeObject(body, fn); err == nil {
			t.Fatal("no error")
		}
	}
	runtime.ReadMemStats(&after)
	perBody := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("%d bytes allocated per refused %d-byte body", perBody, len(body))
	if limit := uint64(len(body) / 2); perBody > limit {
		t.Fatalf("%d bytes allocated per refused %d-byte body, want at most %d", perBody, len(body), limit)
	}
}
