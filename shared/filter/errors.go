package filter

import (
	"fmt"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// Error reports a malformed filter: what is wrong and where.
type Error struct {
	// Pos is the byte offset into the filter at which the problem was found.
	Pos int
	// Msg says what is wrong, for the developer who wrote the filter.
	Msg string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid $filter at position %d: %s", e.Pos, e.Msg)
}

// APIError is the protocol error the service answers a malformed filter
// with: 400 InvalidInput, the code the Table service uses for a query it
// cannot parse, with the position and reason added as detail.
func (e *Error) APIError() *apierr.Error {
	return &apierr.Error{Code: apierr.InvalidInput, Detail: e.Error()}
}

func errorf(pos int, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
