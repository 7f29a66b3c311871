package apierr

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
)

func TestEveryCodeHasStatusAndMessage(t *testing.T) {
	t.Parallel()
	for _, c := range Codes() {
		t.Run(string(c), func(t *testing.T) {
			if s := c.Status(); s < 400 || s > 599 {
				t.Errorf("status %d is not an error status", s)
			}
			if c.Message() == "" {
				t.Error("no default message")
			}
		})
	}
}

func TestStatusesOfTableCodes(t *testing.T) {
	t.Parallel()
	// The statuses PROTOCOL.md lists from the Table service error codes page.
	want := map[Code]int{
		TableAlreadyExists: 409, TableBeingDeleted: 409, TableNotFound: 404, ResourceNotFound: 404,
		EntityAlreadyExists: 409, UpdateConditionNotSatisfied: 412, InvalidInput: 400,
		InvalidResourceName: 400, OutOfRangeInput: 400, InvalidValueType: 400, PropertyNameInvalid: 400,
		PropertyNameTooLong: 400, PropertyValueTooLarge: 400, TooManyProperties: 400, EntityTooLarge: 400,
		DuplicatePropertiesSpecified: 400, PropertiesNeedValue: 400, InvalidDuplicateRow: 400,
		CommandsInBatchActOnDifferentPartitions: 400, AuthenticationFailed: 403,
		AuthorizationPermissionMismatch: 403, RequestBodyTooLarge: 413, MethodNotAllowed: 405,
		NotImplemented: 501, ServerBusy: 503, InternalError: 500, XMethodNotUsingPost: 400,
		XMethodIncorrectValue: 400, JSONFormatNotSupported: 415, AtomFormatNotSupported: 415,
		NoAuthenticationInformation: 401,
	}
	for c, s := range want {
		if got := c.Status(); got != s {
			t.Errorf("%s: status %d, want %d", c, got, s)
		}
	}
	if got := Code("NoSuchCode").Status(); got != http.StatusInternalServerError {
		t.Errorf("unknown code status %d", got)
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	e := Newf(InvalidInput, "detail %d", 1)
	if got, want := e.Text(), InvalidInput.Message()+"\ndetail 1"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("context: %w", &Error{Code: TableNotFound, Status: 409})
	ae, ok := As(wrapped)
	if !ok || ae.Code != TableNotFound || ae.HTTPStatus() != 409 {
		t.Fatalf("As = %v, %v", ae, ok)
	}
	cause := errors.New("disk")
	if w := Wrap(InternalError, cause); !errors.Is(w, cause) {
		t.Error("Wrap loses its cause")
	}
}
