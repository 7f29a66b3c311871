package testserver

import (
	"slices"
	"strings"
)

// InStoreOrder returns the "PartitionKey/RowKey" keys of a query result
// rearranged into (PartitionKey, RowKey) order when the server's store orders
// partitions by hash (WithHashOrderedPartitions), so a test can compare them
// with the ordinal order. It leaves the keys untouched when a partition is
// split into several runs or the store orders partitions itself: then the
// comparison still fails as it should.
func (s *Server) InStoreOrder(keys []string) []string {
	if !s.hashOrderedPartitions {
		return keys
	}
	seen := make(map[string]bool)
	prev := ""
	for i, k := range keys {
		pk, _, _ := strings.Cut(k, "/")
		if i == 0 || pk != prev {
			if seen[pk] {
				return keys
			}
			seen[pk] = true
			prev = pk
		}
	}
	out := slices.Clone(keys)
	slices.SortStableFunc(out, func(a, b string) int {
		pa, _, _ := strings.Cut(a, "/")
		pb, _, _ := strings.Cut(b, "/")
		return strings.Compare(pa, pb)
	})
	return out
}
