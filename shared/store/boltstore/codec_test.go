package boltstore

import (
	"bytes"
	"errors"
	"testing"
)

func TestEntityKeyOrder(t *testing.T) {
	t.Parallel()
	// The byte order of entity keys must be (PartitionKey, RowKey) order.
	keys := [][2]string{
		{"", ""}, {"", "a"}, {"a", ""}, {"a", "b"}, {"a b", ""}, {"ab", ""},
		{"ab", "\U0010FFFD"}, {"abc", ""}, {"é", ""}, {"\uFFFD", "z"}, {"😀", ""},
	}
	for i := 1; i < len(keys); i++ {
		a, b := keys[i-1], keys[i]
		if bytes.Compare(entityKey(a[0], a[1]), entityKey(b[0], b[1])) >= 0 {
			t.Errorf("key %q does not sort before %q", a, b)
		}
		pk, rk, err := splitKey(entityKey(b[0], b[1]))
		if err != nil || string(pk) != b[0] || string(rk) != b[1] {
			t.Errorf("splitKey(entityKey(%q)) = %q, %q, %v", b, pk, rk, err)
		}
	}
	if _, _, err := splitKey([]byte("no separator")); !errors.Is(err, ErrCorrupt) {
		t.Errorf("splitKey without separator = %v; want ErrCorrupt", err)
	}
}
