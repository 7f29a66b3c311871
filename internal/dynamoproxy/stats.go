package dynamoproxy

import (
	"cmp"
	"maps"
	"slices"
)

// Key is one DynamoDB partition key: a table's (Index "") or one of its
// global secondary indexes'. Hash is the key's value as written on the wire
// (the string of an S, the digits of an N, the base64 of a B). A Scan,
// which reads every partition, is counted on its table or index with Hash
// "".
type Key struct {
	Table string
	Index string
	Hash  string
}

func (k Key) String() string {
	s := k.Table
	if k.Index != "" {
		s += "/" + k.Index
	}
	if k.Hash == "" {
		return s + " (scan)"
	}
	return s + "[" + k.Hash + "]"
}

// Usage is what one key took.
type Usage struct {
	// Requests counts the requests forwarded to DynamoDB that touched the
	// key: read it, wrote an item under it, or moved an index entry into
	// or out of it. A request touching several keys counts on each.
	Requests int64
	// ReadUnits and WriteUnits are the capacity units charged to the key.
	ReadUnits  float64
	WriteUnits float64
	// Throttles counts the requests (and, in a batch, the items) answered
	// as throttled because of this key, by the capacity model or a Throttle
	// fault. They are not in Requests.
	Throttles int64
}

func (u *Usage) add(o Usage) {
	u.Requests += o.Requests
	u.ReadUnits += o.ReadUnits
	u.WriteUnits += o.WriteUnits
	u.Throttles += o.Throttles
}

// Stats is a snapshot of what the proxy saw.
type Stats struct {
	// Requests counts the item requests (GetItem, Query, Scan, PutItem,
	// UpdateItem, DeleteItem and their batch and transaction forms)
	// forwarded to DynamoDB, once each, whatever keys they touched.
	Requests int64
	// Ops counts every request received by operation name, control plane
	// (DescribeTable, CreateTable, ...) and throttled ones included.
	Ops map[string]int64
	// Keys is the usage of each key touched.
	Keys map[Key]Usage
}

func (s Stats) clone() Stats {
	return Stats{Requests: s.Requests, Ops: maps.Clone(s.Ops), Keys: maps.Clone(s.Keys)}
}

// Since returns what happened between the earlier snapshot and s: take a
// snapshot before a workload and one after, and s.Since(before) is the
// workload's.
func (s Stats) Since(earlier Stats) Stats {
	out := Stats{Requests: s.Requests - earlier.Requests, Ops: map[string]int64{}, Keys: map[Key]Usage{}}
	for op, n := range s.Ops {
		if d := n - earlier.Ops[op]; d != 0 {
			out.Ops[op] = d
		}
	}
	for k, u := range s.Keys {
		e := earlier.Keys[k]
		d := Usage{Requests: u.Requests - e.Requests, ReadUnits: u.ReadUnits - e.ReadUnits,
			WriteUnits: u.WriteUnits - e.WriteUnits, Throttles: u.Throttles - e.Throttles}
		if d != (Usage{}) {
			out.Keys[k] = d
		}
	}
	return out
}

// Hottest returns the key that the most requests touched, its usage, and
// its share of s.Requests (0 when there were none). Ties go to the key that
// sorts first, so the answer is stable.
func (s Stats) Hottest() (Key, Usage, float64) {
	keys := slices.SortedFunc(maps.Keys(s.Keys), func(a, b Key) int {
		return cmp.Or(cmp.Compare(a.Table, b.Table), cmp.Compare(a.Index, b.Index), cmp.Compare(a.Hash, b.Hash))
	})
	var best Key
	var bestUsage Usage
	for _, k := range keys {
		if u := s.Keys[k]; u.Requests > bestUsage.Requests {
			best, bestUsage = k, u
		}
	}
	if s.Requests == 0 {
		return best, bestUsage, 0
	}
	return best, bestUsage, float64(bestUsage.Requests) / float64(s.Requests)
}
