package filter

import (
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// KeyRange returns PartitionKey and RowKey bounds that contain every entity
// the filter matches, for a store to read less. It is sound, not exact: the
// store must still apply Match. Bounds come from comparisons of PartitionKey
// or RowKey with a string literal (either operand order); and intersects
// them, or takes their hull, and not is pushed inward (De Morgan), which is
// exact for the keys because they are always present Strings, totally
// ordered by edm.Compare in the same byte order model.Bounds uses. ne, and
// comparisons with other literal types or properties, give open bounds. A
// filter that cannot match any key yields bounds whose Empty reports true.
//
// Every call returns fresh bounds the caller may keep or change: the AST
// holds none, and each is built by boundsFor, tighter or looser during the
// call and ends up in one place only.
func (f *Filter) KeyRange() model.KeyRange {
	if f == nil || f.root == nil {
		return model.KeyRange{}
	}
	r := f.root.keyRange(false)
	return model.KeyRange{PartitionKey: r.pk, RowKey: r.rk}
}

// keyRange is a product of two intervals: an entity lies inside when its
// PartitionKey is in pk and its RowKey in rk.
type keyRange struct{ pk, rk model.Bounds }

func (r keyRange) empty() bool { return r.pk.Empty() || r.rk.Empty() }

// keyRange bounds the entities that satisfy n, or, when negated, that do
// not satisfy it.
func (n *node) keyRange(negated bool) keyRange {
	switch n.kind {
	case nodeNot:
		return n.left.keyRange(!negated)
	case nodeConst:
		if n.constant != negated {
			return keyRange{} // always true: open
		}
		return keyRange{pk: boundsFor(opLt, "")} // always false: no key
	case nodeAnd, nodeOr:
		l, r := n.left.keyRange(negated), n.right.keyRange(negated)
		// not (a and b) is (not a) or (not b), and the other way round.
		if (n.kind == nodeAnd) != negated {
			return keyRange{pk: intersect(l.pk, r.pk), rk: intersect(l.rk, r.rk)}
		}
		switch {
		case l.empty():
			return r
		case r.empty():
			return l
		}
		return keyRange{pk: hull(l.pk, r.pk), rk: hull(l.rk, r.rk)}
	}
	var r keyRange
	if n.lit.Type != edm.String || (n.sys != sysPartitionKey && n.sys != sysRowKey) {
		return r // open: not a key comparison this package can bound
	}
	op := n.op
	if negated {
		op = op.negate()
	}
	b := boundsFor(op, n.lit.Str)
	if n.sys == sysPartitionKey {
		r.pk = b
	} else {
		r.rk = b
	}
	return r
}

// boundsFor is the set of keys k with "k op v".
func boundsFor(op compareOp, v string) model.Bounds {
	switch op {
	case opEq:
		return model.Bounds{Lower: &model.Bound{Value: v, Inclusive: true}, Upper: &model.Bound{Value: v, Inclusive: true}}
	case opGt:
		return model.Bounds{Lower: &model.Bound{Value: v}}
	case opGe:
		return model.Bounds{Lower: &model.Bound{Value: v, Inclusive: true}}
	case opLt:
		if v == "" {
			// Nothing sorts before "": say so in a form Empty recognises.
			return model.Bounds{Lower: &model.Bound{Inclusive: true}, Upper: &model.Bound{}}
		}
		return model.Bounds{Upper: &model.Bound{Value: v}}
	case opLe:
		return model.Bounds{Upper: &model.Bound{Value: v, Inclusive: true}}
	}
	return model.Bounds{} // ne: two intervals, whose hull is everything
}

// intersect is the set of keys within both a and b.
func intersect(a, b model.Bounds) model.Bounds {
	return model.Bounds{Lower: tighter(a.Lower, b.Lower, 1), Upper: tighter(a.Upper, b.Upper, -1)}
}

// hull is the smallest interval holding both a and b.
func hull(a, b model.Bounds) model.Bounds {
	return model.Bounds{Lower: looser(a.Lower, b.Lower, -1), Upper: looser(a.Upper, b.Upper, 1)}
}

// tighter picks the more restrictive of two bounds on the same side; dir is
// +1 for lower bounds (the greater value wins) and -1 for upper bounds. A
// nil bound is open and restricts nothing.
func tighter(a, b *model.Bound, dir int) *model.Bound {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Value == b.Value:
		return &model.Bound{Value: a.Value, Inclusive: a.Inclusive && b.Inclusive}
	case (a.Value > b.Value) == (dir > 0):
		return a
	}
	return b
}

// looser picks the less restrictive of two bounds on the same side; dir is
// -1 for lower bounds (the smaller value wins) and +1 for upper bounds.
func looser(a, b *model.Bound, dir int) *model.Bound {
	switch {
	case a == nil || b == nil:
		return nil
	case a.Value == b.Value:
		return &model.Bound{Value: a.Value, Inclusive: a.Inclusive || b.Inclusive}
	case (a.Value > b.Value) == (dir > 0):
		return a
	}
	return b
}
