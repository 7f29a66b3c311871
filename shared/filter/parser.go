package filter

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablebridge/tablebridge/shared/edm"
)

const (
	// MaxComparisons is the Table service's limit: "no more than 15 discrete
	// comparisons are permitted within a $filter string". A bare Boolean
	// property counts as one.
	MaxComparisons = 15
	// MaxDepth bounds the nesting of parentheses and "not", so a hostile
	// filter cannot drive the recursive parser arbitrarily deep. Fifteen
	// comparisons never need more than a few dozen levels.
	MaxDepth = 100
)

// Parse parses a $filter expression. An empty or all-whitespace filter is
// no condition at all, as the Table service treats "$filter=" (it does not
// reject it). A malformed filter returns an *Error.
func Parse(src string) (*Filter, error) {
	if !utf8.ValidString(src) {
		return nil, errorf(firstInvalidUTF8(src), "the filter is not valid UTF-8")
	}
	p := &parser{lex: lexer{src: src}}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokEOF {
		return &Filter{}, nil
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.tok.kind != tokEOF {
		return nil, p.unexpected("'and', 'or' or the end of the filter")
	}
	return &Filter{root: root}, nil
}

func firstInvalidUTF8(s string) int {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return i
			}
		}
	}
	return len(s)
}

type parser struct {
	lex         lexer
	tok         token // the current, not yet consumed token
	comparisons int
	depth       int
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

// isKeyword reports whether the current token is the identifier kw.
// Keywords are case-sensitive, as the Table service documents.
func (p *parser) isKeyword(kw string) bool {
	return p.tok.kind == tokIdent && p.tok.text == kw
}

func (p *parser) unexpected(want string) *Error {
	msg := "expected " + want + ", found " + p.tok.describe()
	if p.tok.kind == tokIdent {
		if _, ok := lookupOp(strings.ToLower(p.tok.text)); ok || isLogical(strings.ToLower(p.tok.text)) {
			msg += " (operators are case-sensitive: write " + strings.ToLower(p.tok.text) + ")"
		}
	}
	return &Error{Pos: p.tok.pos, Msg: msg}
}

func isLogical(s string) bool { return s == "and" || s == "or" || s == "not" }

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return errorf(p.tok.pos, "the filter nests deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *parser) parseOr() (*node, error) {
	left, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("or") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		left = &node{kind: nodeOr, left: left, right: right}
	}
	return left, nil
}

func (p *parser) parseAnd() (*node, error) {
	left, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isKeyword("and") {
		if err := p.advance(); err != nil {
			return nil, err
		}
		right, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		left = &node{kind: nodeAnd, left: left, right: right}
	}
	return left, nil
}

func (p *parser) parseNot() (*node, error) {
	if !p.isKeyword("not") {
		return p.parseComparison()
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	operand, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	p.depth--
	return &node{kind: nodeNot, left: operand}, nil
}

// operand is what may stand on either side of a comparison operator.
type operand struct {
	pos  int
	expr *node     // a parenthesised expression
	prop string    // a property name
	lit  edm.Value // a literal, when lit.Type != 0
}

func (p *parser) parseComparison() (*node, error) {
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	op, isOp := compareOp(0), false
	if p.tok.kind == tokIdent {
		op, isOp = lookupOp(p.tok.text)
	}
	if !isOp {
		switch {
		case left.expr != nil:
			return left.expr, nil
		case left.prop != "":
			// A bare property is a Boolean predicate ("IsActive").
			return p.comparison(left.pos, left.prop, opEq, edm.NewBoolean(true))
		}
		if p.tok.kind == tokEOF || p.tok.kind == tokRParen || p.isKeyword("and") || p.isKeyword("or") {
			// OData v3 (and so the Table service): a Boolean literal is
			// a Boolean expression. The .NET LINQ provider writes
			// "(true and RowKey eq '1')"; "$filter=false" matches nothing.
			if left.lit.Type == edm.Boolean {
				return &node{kind: nodeConst, constant: left.lit.Bool}, nil
			}
			return nil, errorf(left.pos, "a literal alone is not a condition unless it is true or false: compare a property with it")
		}
		return nil, p.unexpected("a comparison operator (eq, ne, gt, ge, lt, le)")
	}
	opPos := p.tok.pos
	if err := p.advance(); err != nil {
		return nil, err
	}
	right, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	switch {
	case left.expr != nil || right.expr != nil:
		return nil, errorf(opPos, "%s compares a parenthesised expression: compare a property with a literal", op)
	case left.prop != "" && right.prop != "":
		return nil, errorf(opPos, "%s compares two properties: one side must be a literal", op)
	case left.prop == "" && right.prop == "":
		return p.constantComparison(opPos, op, left.lit, right.lit)
	case left.prop != "":
		return p.comparison(left.pos, left.prop, op, right.lit)
	default:
		return p.comparison(right.pos, right.prop, op.flip(), left.lit)
	}
}

func (p *parser) comparison(pos int, prop string, op compareOp, lit edm.Value) (*node, error) {
	if err := p.countComparison(pos); err != nil {
		return nil, err
	}
	return &node{kind: nodeCompare, op: op, prop: prop, sys: lookupSystem(prop), lit: lit}, nil
}

// countComparison counts one more comparison against MaxComparisons.
func (p *parser) countComparison(pos int) error {
	p.comparisons++
	if p.comparisons > MaxComparisons {
		return errorf(pos, "the filter has more than %d comparisons, the Table service's limit", MaxComparisons)
	}
	return nil
}

// constantComparison decides a comparison of two literals ("1 eq 1",
// "true ne false") at parse time, as an OData evaluator folds constants.
// Literals of types that do not compare are a type error, as OData's
// "operator 'eq' incompatible with operand types" is.
func (p *parser) constantComparison(pos int, op compareOp, left, right edm.Value) (*node, error) {
	if err := p.countComparison(pos); err != nil {
		return nil, err
	}
	if left.Type != right.Type {
		return nil, errorf(pos, "%s compares an %s literal with an %s literal", op, left.Type, right.Type)
	}
	// NaN compares with nothing: false, as a comparison with a property is.
	c, ok := edm.Compare(left, right)
	return &node{kind: nodeConst, constant: ok && op.holds(c)}, nil
}

func (p *parser) parseOperand() (operand, error) {
	t := p.tok
	switch t.kind {
	case tokLParen:
		if err := p.enter(); err != nil {
			return operand{}, err
		}
		if err := p.advance(); err != nil {
			return operand{}, err
		}
		if p.tok.kind == tokRParen {
			return operand{}, errorf(p.tok.pos, "empty parentheses")
		}
		expr, err := p.parseOr()
		if err != nil {
			return operand{}, err
		}
		if p.tok.kind != tokRParen {
			return operand{}, p.unexpected("')' to close the '(' at position " + strconv.Itoa(t.pos))
		}
		p.depth--
		return operand{pos: t.pos, expr: expr}, p.advance()
	case tokLiteral:
		return operand{pos: t.pos, lit: t.lit}, p.advance()
	case tokIdent:
		switch t.text {
		case "true", "false":
			return operand{pos: t.pos, lit: edm.NewBoolean(t.text == "true")}, p.advance()
		case "null":
			return operand{}, errorf(t.pos, "null is not supported: a comparison with a missing property is already false")
		}
		if err := p.advance(); err != nil {
			return operand{}, err
		}
		if p.tok.kind == tokLParen {
			return operand{}, errorf(t.pos, "functions such as %s() are not supported by the Table service", t.text)
		}
		return operand{pos: t.pos, prop: t.text}, nil
	}
	return operand{}, p.unexpected("a property, a literal or '('")
}
