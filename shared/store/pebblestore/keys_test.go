package pebblestore

import (
	"bytes"
	"cmp"
	"strings"
	"testing"
)

// FuzzEntityKeyOrder: entity keys sort as Azure orders entities,
// PartitionKey then RowKey by their bytes, for any strings (zero bytes and
// empty keys included), and split back into the keys they were made of.
func FuzzEntityKeyOrder(f *testing.F) {
	seeds := [][4]string{
		{"", "", "", ""},
		{"a", "", "", "z"},
		{"a", "b", "a\x00", ""},
		{"a\x00", "x", "a\x01", ""},
		{"a\x00b", "", "a\x00\x00", "\xff"},
		{"p", "r\x00", "p", "r"},
		{"pk", "\x01", "pk\x00", ""},
		{"é", "😀", "e", "\uffff"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2], s[3])
	}
	prefix := tablePrefix("acct", "tbl")
	f.Fuzz(func(t *testing.T, pk1, rk1, pk2, rk2 string) {
		k1 := appendEntityKey(bytes.Clone(prefix), pk1, rk1)
		k2 := appendEntityKey(bytes.Clone(prefix), pk2, rk2)
		want := cmp.Or(strings.Compare(pk1, pk2), strings.Compare(rk1, rk2))
		if got := bytes.Compare(k1, k2); got != want {
			t.Errorf("keys of (%q, %q) and (%q, %q) compare %d; want %d", pk1, rk1, pk2, rk2, got, want)
		}
		for _, c := range [][3]string{{pk1, rk1, string(k1)}, {pk2, rk2, string(k2)}} {
			pk, rk, err := splitEntityKey([]byte(c[2])[len(prefix):])
			if err != nil || string(pk) != c[0] || string(rk) != c[1] {
				t.Errorf("split of the key of (%q, %q) = (%q, %q), %v", c[0], c[1], pk, rk, err)
			}
		}
		// Every key of a PartitionKey lies between the partition's first
		// key and the key past it; any other PartitionKey's lie outside.
		first := appendComponent(bytes.Clone(prefix), pk1)
		past := componentPast(bytes.Clone(first))
		inside := bytes.Compare(k2, first) >= 0 && bytes.Compare(k2, past) < 0
		if inside != (pk1 == pk2) {
			t.Errorf("key of (%q, %q) inside the range of PartitionKey %q: %v", pk2, rk2, pk1, inside)
		}
		// And all of them inside the table's range.
		if bytes.Compare(k1, prefix) < 0 || bytes.Compare(k1, componentPast(bytes.Clone(prefix))) >= 0 {
			t.Errorf("key of (%q, %q) outside its table's range", pk1, rk1)
		}
	})
}

func TestReadComponentRefusesDamagedKeys(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "abc", "abc\x00", "a\x00\x07b\x00\x01", "a\x00\xff"} {
		if _, _, err := readComponent([]byte(k)); err == nil {
			t.Errorf("readComponent(%q) succeeded", k)
		}
	}
}
