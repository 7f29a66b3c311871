package loadgen

import "errors"

var errNoValueArray = errors.New(`query response has no top-level "value" array`)

// countValueRows counts the entities of a Query Entities response body,
// {"odata.metadata":"...","value":[{...},{...}]}, without decoding them. A
// full json.Unmarshal of a 1000-row page would cost the client more CPU than
// the server spends producing it, and the client shares the machine. The
// scan tracks strings, escapes and nesting depth, so braces inside values
// never miscount; it is not a validator, and a truncated body is an error.
func countValueRows(body []byte) (int, error) {
	depth := 0
	inString := false
	// keyStart marks the start of the last string seen at depth 1, so that
	// "value" is recognized only as a key of the top-level object.
	keyStart, keyEnd := -1, -1
	inValue := false // inside the top-level "value" array
	found := false
	rows := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if inString {
			switch c {
			case '\\':
				i++ // skip the escaped byte
			case '"':
				inString = false
				if depth == 1 {
					keyEnd = i
				}
			}
			continue
		}
		switch c {
		case '"':
			inString = true
			if depth == 1 {
				keyStart = i + 1
			}
		case '{':
			depth++
			if inValue && depth == 3 {
				rows++
			}
		case '[':
			depth++
			if depth == 2 && keyStart >= 0 && keyEnd > keyStart && string(body[keyStart:keyEnd]) == "value" {
				inValue, found = true, true
			}
		case '}', ']':
			depth--
			if depth < 0 {
				return 0, errors.New("query response: unbalanced JSON")
			}
			if depth == 1 {
				inValue = false
			}
		case ',':
			if depth == 1 {
				keyStart, keyEnd = -1, -1
			}
		}
	}
	if depth != 0 || inString {
		return 0, errors.New("query response: truncated JSON")
	}
	if !found {
		return 0, errNoValueArray
	}
	return rows, nil
}
