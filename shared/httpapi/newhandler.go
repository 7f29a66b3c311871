package httpapi

import (
	"context"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// NewHandler wires the whole REST API over a store: the tables.Service, a
// verifier for accounts whose stored access policies (table SAS "si") are
// read from st, and the handler. The local server and every Lambda function
// build their handler with it, so both doors serve the same stack.
// opts.Now also clocks the service (entity Timestamps).
func NewHandler(st store.Store, accounts []auth.Account, opts Options) (*Handler, error) {
	svc, err := tables.New(st, tables.Options{Now: opts.Now})
	if err != nil {
		return nil, err
	}
	var vopts []auth.VerifierOption
	if opts.Tokens != nil {
		vopts = append(vopts, auth.WithTokens(opts.Tokens))
	}
	verifier, err := auth.NewVerifier(accounts, func(ctx context.Context, account, table string) ([]model.SignedIdentifier, error) {
		info, err := st.GetTable(ctx, account, table)
		return info.ACL, err
	}, vopts...)
	if err != nil {
		return nil, err
	}
	return New(svc, verifier, opts)
}
