package filter

import (
	"strconv"
	"strings"

	"github.com/tablebridge/tablebridge/shared/edm"
)

// Filter is a parsed $filter. The zero Filter, like the one Parse returns
// for an empty filter, matches every entity. A Filter is immutable and safe
// for concurrent use.
type Filter struct {
	root *node // nil: no condition
}

type nodeKind uint8

const (
	nodeAnd nodeKind = iota + 1
	nodeOr
	nodeNot
	nodeCompare
	// nodeConst is a condition whose value the filter alone decides: a
	// Boolean literal ("true", as the .NET LINQ provider writes it) or a
	// comparison of two literals.
	nodeConst
)

// node is one AST node. A single struct type, rather than an interface per
// kind, keeps evaluation a switch without dynamic dispatch or allocation.
type node struct {
	kind nodeKind
	// left and right are the operands of and/or; not uses left only.
	left, right *node

	// A comparison always reads "property op literal": the parser turns
	// "literal op property" around.
	op   compareOp
	prop string
	sys  systemProperty // which Entity field prop names, if any
	lit  edm.Value

	// constant is the value of a nodeConst.
	constant bool
}

type compareOp uint8

const (
	opEq compareOp = iota + 1
	opNe
	opGt
	opGe
	opLt
	opLe
)

var opNames = [...]string{opEq: "eq", opNe: "ne", opGt: "gt", opGe: "ge", opLt: "lt", opLe: "le"}

func (op compareOp) String() string { return opNames[op] }

func lookupOp(s string) (compareOp, bool) {
	for op := opEq; op <= opLe; op++ {
		if opNames[op] == s {
			return op, true
		}
	}
	return 0, false
}

// flip is the operator that keeps the meaning when the operands swap:
// 'a' lt PartitionKey is PartitionKey gt 'a'.
func (op compareOp) flip() compareOp {
	switch op {
	case opGt:
		return opLt
	case opGe:
		return opLe
	case opLt:
		return opGt
	case opLe:
		return opGe
	}
	return op
}

// negate is the operator that holds exactly when op does not, for values
// that are comparable (a total order).
func (op compareOp) negate() compareOp {
	switch op {
	case opEq:
		return opNe
	case opNe:
		return opEq
	case opGt:
		return opLe
	case opGe:
		return opLt
	case opLt:
		return opGe
	}
	return opGt // opLe
}

// holds applies op to the result of a three-way comparison.
func (op compareOp) holds(c int) bool {
	switch op {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opGt:
		return c > 0
	case opGe:
		return c >= 0
	case opLt:
		return c < 0
	}
	return c <= 0 // opLe
}

// systemProperty names the properties that live in model.Entity's own
// fields rather than in Properties.
type systemProperty uint8

const (
	sysNone systemProperty = iota
	sysPartitionKey
	sysRowKey
	sysTimestamp
)

func lookupSystem(name string) systemProperty {
	switch name {
	case "PartitionKey":
		return sysPartitionKey
	case "RowKey":
		return sysRowKey
	case "Timestamp":
		return sysTimestamp
	}
	return sysNone
}

// String prints the AST canonically, fully parenthesised in prefix form
// with typed literals, e.g. (and (eq PartitionKey 'a') (gt Age 30)). A bare
// Boolean property prints as its comparison with true. An empty filter
// prints as "".
func (f *Filter) String() string {
	if f == nil || f.root == nil {
		return ""
	}
	var b strings.Builder
	f.root.writePrefix(&b)
	return b.String()
}

func (n *node) writePrefix(b *strings.Builder) {
	b.WriteByte('(')
	switch n.kind {
	case nodeAnd, nodeOr:
		b.WriteString(n.kind.keyword())
		b.WriteByte(' ')
		n.left.writePrefix(b)
		b.WriteByte(' ')
		n.right.writePrefix(b)
	case nodeNot:
		b.WriteString("not ")
		n.left.writePrefix(b)
	case nodeCompare:
		b.WriteString(n.op.String())
		b.WriteByte(' ')
		b.WriteString(n.prop)
		b.WriteByte(' ')
		formatLiteral(b, n.lit)
	case nodeConst:
		b.WriteString(strconv.FormatBool(n.constant))
	}
	b.WriteByte(')')
}

// OData prints the filter back as $filter text, fully parenthesised, with
// the property always on the left and literals in canonical form. Parse
// reads it back to a Filter with the same String.
func (f *Filter) OData() string {
	if f == nil || f.root == nil {
		return ""
	}
	var b strings.Builder
	f.root.writeInfix(&b)
	return b.String()
}

func (n *node) writeInfix(b *strings.Builder) {
	b.WriteByte('(')
	switch n.kind {
	case nodeAnd, nodeOr:
		n.left.writeInfix(b)
		b.WriteByte(' ')
		b.WriteString(n.kind.keyword())
		b.WriteByte(' ')
		n.right.writeInfix(b)
	case nodeNot:
		b.WriteString("not ")
		n.left.writeInfix(b)
	case nodeCompare:
		b.WriteString(n.prop)
		b.WriteByte(' ')
		b.WriteString(n.op.String())
		b.WriteByte(' ')
		formatLiteral(b, n.lit)
	case nodeConst:
		b.WriteString(strconv.FormatBool(n.constant))
	}
	b.WriteByte(')')
}

func (k nodeKind) keyword() string {
	switch k {
	case nodeAnd:
		return "and"
	case nodeOr:
		return "or"
	case nodeNot:
		return "not"
	}
	return "compare"
}
