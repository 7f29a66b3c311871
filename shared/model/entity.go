package model

import (
	"bytes"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
)

// Entity is one stored entity. Properties holds the custom properties only:
// PartitionKey, RowKey and Timestamp live in their own fields and never in
// the map. A property that was sent as null is absent from the map.
type Entity struct {
	PartitionKey string
	RowKey       string
	// Timestamp is server-managed: the service sets it on every write and the
	// ETag is derived from it.
	Timestamp  time.Time
	Properties map[string]edm.Value
}

// Clone returns a deep copy, so a store can hand out entities that callers
// may change.
func (e *Entity) Clone() *Entity {
	c := *e
	c.Properties = make(map[string]edm.Value, len(e.Properties))
	for k, v := range e.Properties {
		// bytes.Clone keeps an empty value empty rather than nil: an
		// empty Edm.Binary is a present property, not a null one.
		v.Bin = bytes.Clone(v.Bin)
		c.Properties[k] = v
	}
	return &c
}

// KeyRange is a pushdown hint derived from a $filter: the entities the filter
// can possibly match lie within PartitionKey and RowKey bounds. Nil bounds are
// open.
type KeyRange struct {
	PartitionKey Bounds
	RowKey       Bounds
}

// Bounds constrain one key. Lower and Upper are nil when open.
type Bounds struct {
	Lower *Bound
	Upper *Bound
}

// Bound is one end of a range.
type Bound struct {
	Value     string
	Inclusive bool
}

// Exact returns the value when the bounds pin one key (k eq 'x'), and false
// otherwise.
func (b Bounds) Exact() (string, bool) {
	if b.Lower != nil && b.Upper != nil && b.Lower.Inclusive && b.Upper.Inclusive && b.Lower.Value == b.Upper.Value {
		return b.Lower.Value, true
	}
	return "", false
}

// Contains reports whether k lies within the bounds (ordinal string order).
func (b Bounds) Contains(k string) bool {
	if b.Lower != nil && (k < b.Lower.Value || (!b.Lower.Inclusive && k == b.Lower.Value)) {
		return false
	}
	if b.Upper != nil && (k > b.Upper.Value || (!b.Upper.Inclusive && k == b.Upper.Value)) {
		return false
	}
	return true
}

// Empty reports whether no key can satisfy the bounds.
func (b Bounds) Empty() bool {
	if b.Lower == nil || b.Upper == nil {
		return false
	}
	if b.Lower.Value > b.Upper.Value {
		return true
	}
	return b.Lower.Value == b.Upper.Value && !(b.Lower.Inclusive && b.Upper.Inclusive)
}

// Intersect returns the bounds of the keys both b and o contain.
func (b Bounds) Intersect(o Bounds) Bounds {
	return Bounds{Lower: tighter(b.Lower, o.Lower, 1), Upper: tighter(b.Upper, o.Upper, -1)}
}

// tighter picks the bound that admits less: the higher lower bound (dir 1)
// or the lower upper bound (dir -1); at an equal value, the exclusive one.
func tighter(a, b *Bound, dir int) *Bound {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Value == b.Value:
		return &Bound{Value: a.Value, Inclusive: a.Inclusive && b.Inclusive}
	case (a.Value > b.Value) == (dir > 0):
		return a
	}
	return b
}

// Intersect returns the range of the keys both r and o contain.
func (r KeyRange) Intersect(o KeyRange) KeyRange {
	return KeyRange{PartitionKey: r.PartitionKey.Intersect(o.PartitionKey), RowKey: r.RowKey.Intersect(o.RowKey)}
}

// Contains reports whether the keys lie within the range.
func (r KeyRange) Contains(pk, rk string) bool {
	return r.PartitionKey.Contains(pk) && r.RowKey.Contains(rk)
}

// SignedIdentifier is one stored access policy from a table's ACL
// (?comp=acl). Start and Expiry are zero when not set; Permission is a subset
// of "raud".
type SignedIdentifier struct {
	ID         string
	Start      time.Time
	Expiry     time.Time
	Permission string
}
