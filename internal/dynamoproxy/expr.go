package dynamoproxy

import (
	"encoding/json"
	"strings"
)

// The proxy reads just enough of DynamoDB's expression language to find
// the partition key value a Query's key condition fixes and the attributes
// an UpdateExpression names ("Using expressions in DynamoDB", Developer
// Guide). Attribute names are words or #placeholders; values are
// :placeholders.

// exprTokens splits an expression into words (names, #names, :values,
// keywords, numbers) and single punctuation, with the comparators <=, >=
// and <> kept whole.
func exprTokens(s string) []string {
	var toks []string
	word := func(r byte) bool {
		return r == '_' || r == '#' || r == ':' ||
			r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r >= 0x80
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case word(c):
			j := i
			for j < len(s) && word(s[j]) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case i+1 < len(s) && (s[i:i+2] == "<=" || s[i:i+2] == ">=" || s[i:i+2] == "<>"):
			toks = append(toks, s[i:i+2])
			i += 2
		default:
			toks = append(toks, s[i:i+1])
			i++
		}
	}
	return toks
}

// resolve turns a name token into the attribute name it stands for.
func resolve(tok string, names map[string]string) string {
	if strings.HasPrefix(tok, "#") {
		return names[tok]
	}
	return tok
}

// queryHash returns the partition key value a Query fixes: the :value of
// "hashAttr = :value" in its KeyConditionExpression, or the EQ of the
// legacy KeyConditions.
func queryHash(in object, hashAttr string) string {
	names := in.names()
	values := in.attrs("ExpressionAttributeValues")
	toks := exprTokens(in.str("KeyConditionExpression"))
	for i := 1; i+1 < len(toks); i++ {
		if toks[i] != "=" {
			continue
		}
		l, r := toks[i-1], toks[i+1]
		if strings.HasPrefix(l, ":") {
			l, r = r, l
		}
		if strings.HasPrefix(r, ":") && resolve(l, names) == hashAttr {
			if v, ok := scalar(values[r]); ok {
				return v
			}
		}
	}
	var cond struct {
		AttributeValueList []json.RawMessage
		ComparisonOperator string
	}
	_ = json.Unmarshal(in.object("KeyConditions")[hashAttr], &cond)
	if cond.ComparisonOperator == "EQ" && len(cond.AttributeValueList) == 1 {
		v, _ := scalar(cond.AttributeValueList[0])
		return v
	}
	return ""
}

// namesIndexKey reports whether an update may change a global secondary
// index key of its item: its UpdateExpression (or legacy AttributeUpdates)
// names an index key attribute. One that does not leaves the item's index
// keys as they were.
func namesIndexKey(in object, t *tableSchema) bool {
	if len(t.indexes) == 0 {
		return false
	}
	names := in.names()
	for _, tok := range exprTokens(in.str("UpdateExpression")) {
		if !strings.HasPrefix(tok, ":") && t.indexKeyAttr(resolve(tok, names)) {
			return true
		}
	}
	for name := range in.object("AttributeUpdates") {
		if t.indexKeyAttr(name) {
			return true
		}
	}
	return false
}
