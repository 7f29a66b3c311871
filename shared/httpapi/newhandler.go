package httpapi

import (
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// NewHandler wires the whole REST API over a Table service: a verifier for
// accounts whose stored access policies (table SAS "si") the service reads,
// and the handler. The local server and every Lambda function build their
// handler with it, so both doors serve the same stack.
func NewHandler(svc *tables.Service, accounts []auth.Account, opts Options) (*Handler, error) {
	var vopts []auth.VerifierOption
	if opts.Tokens != nil {
		vopts = append(vopts, auth.WithTokens(opts.Tokens))
	}
	verifier, err := auth.NewVerifier(accounts, svc.StoredAccessPolicies, vopts...)
	if err != nil {
		return nil, err
	}
	return New(svc, verifier, opts)
}
