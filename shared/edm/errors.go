package edm

import "strconv"

// ErrorKind classifies a decoding failure so that the validation layer can
// answer with the matching Azure error code without parsing messages.
type ErrorKind uint8

// The kinds of decoding failure.
const (
	// ErrSyntax is malformed JSON: a bad token, a bad escape, invalid UTF-8,
	// a lone UTF-16 surrogate, trailing data, or a body that is not an object.
	ErrSyntax ErrorKind = iota + 1
	// ErrNested is a nested object or array. Table entities are flat.
	ErrNested
	// ErrUnknownType is an "@odata.type" annotation naming no Edm type the
	// Table service supports, or an annotation whose value is not a string.
	ErrUnknownType
	// ErrBadValue is a value that does not fit its declared (or inferred)
	// type: "abc" as Edm.Int32, 1.5 as Edm.Int64, a malformed Guid, ...
	ErrBadValue
	// ErrOutOfRange is a well-formed value outside the range the Table
	// service stores: a DateTime before 1601 or after 9999, or a number too
	// large for a Double.
	ErrOutOfRange
	// ErrDuplicate is a JSON member name that appears twice, including a
	// property annotated twice.
	ErrDuplicate
	// ErrTooManyMembers is an object of more than MaxMembers members.
	ErrTooManyMembers
)

var kindNames = [...]string{
	ErrSyntax:         "syntax",
	ErrNested:         "nested value",
	ErrUnknownType:    "unknown type",
	ErrBadValue:       "bad value",
	ErrOutOfRange:     "out of range",
	ErrDuplicate:      "duplicate",
	ErrTooManyMembers: "too many members",
}

// String names the kind for messages and test output.
func (k ErrorKind) String() string {
	if k == 0 || int(k) >= len(kindNames) {
		return "unknown"
	}
	return kindNames[k]
}

// Error is a decoding failure. Property is empty when the failure is not
// tied to one property (a syntax error, for instance).
type Error struct {
	Kind     ErrorKind
	Property string
	// Offset is the byte offset in the input where the problem was found.
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	s := "edm: " + e.Kind.String()
	if e.Property != "" {
		s += " in property " + strconv.Quote(e.Property)
	}
	s += " at offset " + strconv.Itoa(e.Offset)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}
