package stack

import (
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// New returns the REST API handler for accounts over the Table service
// over st, as given (a caller that restricts the store wraps it first).
// opts configure the handler; opts.Now is the service's clock too, so the
// Date of an answer and the Timestamp of an entity come from one clock.
func New(st store.Store, accounts []auth.Account, opts httpapi.Options) (*httpapi.Handler, error) {
	svc, err := tables.New(st, tables.Options{Now: opts.Now})
	if err != nil {
		return nil, err
	}
	return httpapi.NewHandler(svc, accounts, opts)
}
