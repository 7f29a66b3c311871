package model

import (
	"errors"
	"net/http"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

// wantCode asserts that err is an *apierr.Error with the code and a 400
// status, or nil when code is empty.
func wantCode(t *testing.T, err error, code apierr.Code) {
	t.Helper()
	if code == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error = %v, want *apierr.Error with code %s", err, code)
	}
	if ae.Code != code {
		t.Fatalf("code = %s (%v), want %s", ae.Code, err, code)
	}
	if ae.HTTPStatus() != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400", ae.HTTPStatus())
	}
	if ae.Text() == "" {
		t.Fatal("empty client message")
	}
}
