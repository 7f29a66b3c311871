package filter

import (
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// Match reports whether the entity satisfies the filter. PartitionKey and
// RowKey (Edm.String) and Timestamp (Edm.DateTime) come from the entity's
// fields, every other name from Properties. A comparison on a missing
// property, or on a value whose type the literal cannot be compared with, is
// false whatever the operator, ne included, as in the Table service.
//
// Match does not allocate: it runs once per scanned row.
func (f *Filter) Match(e *model.Entity) bool {
	if e == nil {
		return false
	}
	if f == nil || f.root == nil {
		return true
	}
	return f.root.eval(e)
}

func (n *node) eval(e *model.Entity) bool {
	switch n.kind {
	case nodeAnd:
		return n.left.eval(e) && n.right.eval(e)
	case nodeOr:
		return n.left.eval(e) || n.right.eval(e)
	case nodeNot:
		return !n.left.eval(e)
	case nodeConst:
		return n.constant
	}
	var v edm.Value
	switch n.sys {
	case sysPartitionKey:
		v = edm.Value{Type: edm.String, Str: e.PartitionKey}
	case sysRowKey:
		v = edm.Value{Type: edm.String, Str: e.RowKey}
	case sysTimestamp:
		v = edm.Value{Type: edm.DateTime, Time: e.Timestamp}
	default:
		var ok bool
		if v, ok = e.Properties[n.prop]; !ok {
			return false
		}
	}
	c, ok := edm.Compare(v, n.lit)
	return ok && n.op.holds(c)
}
