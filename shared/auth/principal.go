package auth

import (
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// Scheme is how a request was authenticated.
type Scheme int

// Authentication schemes.
const (
	SchemeSharedKey Scheme = iota + 1
	SchemeSharedKeyLite
	SchemeAccountSAS
	SchemeTableSAS
	SchemeBearer // an OAuth 2.0 bearer token (Microsoft Entra ID or another OIDC issuer)
)

func (s Scheme) String() string {
	switch s {
	case SchemeSharedKey:
		return "SharedKey"
	case SchemeSharedKeyLite:
		return "SharedKeyLite"
	case SchemeAccountSAS:
		return "AccountSAS"
	case SchemeTableSAS:
		return "TableSAS"
	case SchemeBearer:
		return "Bearer"
	}
	return "Unknown"
}

// Operation is a Table service REST operation; shared/operation is the
// table of them and of the permissions each needs.
type Operation = operation.Operation

// Principal is an authenticated caller: an account key holder (Shared Key)
// or the bearer of a SAS token. Shared Key principals are shared between
// requests, so a Principal is immutable.
type Principal struct {
	account string
	scheme  Scheme
	// sas holds what a SAS token grants; nil for Shared Key.
	sas *grant
	// token holds what a bearer token grants; nil for the other schemes.
	token *TokenGrant
}

// Account is the authenticated account's name.
func (p *Principal) Account() string { return p.account }

// Scheme is how the principal authenticated.
func (p *Principal) Scheme() Scheme { return p.scheme }

// Name identifies a bearer token's subject for logs ("oid:...", "sub:...");
// it is "" for Shared Key and SAS, whose holder is the account's key holder.
func (p *Principal) Name() string {
	if p.token == nil {
		return ""
	}
	return p.token.Principal
}

// Authorize reports whether the principal may perform op on table (""
// for service-level operations, Query Tables and Create Table). Shared Key
// may do everything. A refusal is a 403 *apierr.Error with the code Azure
// uses: AuthorizationResourceTypeMismatch for an account SAS without the
// resource type, AuthorizationPermissionMismatch for missing permissions,
// and AuthorizationFailure for an operation no SAS of that kind can perform
// (a table SAS listing tables, any SAS reading an ACL, which "only the
// account owner may call") or a table SAS used on another table.
func (p *Principal) Authorize(op Operation, table string) error {
	switch p.scheme {
	case SchemeSharedKey, SchemeSharedKeyLite:
		return nil
	case SchemeAccountSAS:
		return p.sas.authorizeAccount(op)
	case SchemeTableSAS:
		return p.sas.authorizeTable(op, table)
	case SchemeBearer:
		return p.token.authorize(op, table)
	}
	return apierr.New(apierr.AuthorizationFailure)
}

// AllowsEntity reports whether a table SAS key range (spk, srk, epk, erk)
// reaches the entity. It is always true for other principals. Queries must
// drop entities outside the range, and writes to them must be refused with
// 403 AuthorizationFailure.
func (p *Principal) AllowsEntity(partitionKey, rowKey string) bool {
	if p.scheme != SchemeTableSAS || p.sas == nil {
		return true
	}
	return p.sas.keys.contains(partitionKey, rowKey)
}

// KeyRange returns bounds that contain every entity the principal may reach,
// for a store to push down, and false when there is no restriction. The
// bounds can be wider than the SAS range (Azure's range is ordered by
// PartitionKey then RowKey, which per-key bounds cannot always express), so
// results must still be filtered with AllowsEntity.
func (p *Principal) KeyRange() (model.KeyRange, bool) {
	if p.scheme != SchemeTableSAS || p.sas == nil || !p.sas.keys.restricted() {
		return model.KeyRange{}, false
	}
	return p.sas.keys.bounds(), true
}

// Table is the table a table SAS is bound to (as given in tn), or "".
func (p *Principal) Table() string {
	if p.scheme != SchemeTableSAS || p.sas == nil {
		return ""
	}
	return p.sas.table
}

// perm is a set of SAS permission letters.
type perm uint16

const (
	permRead perm = 1 << iota
	permWrite
	permDelete
	permList
	permAdd
	permCreate
	permUpdate
	permProcess
)

// resource is a set of account SAS resource types (srt).
type resource uint8

const (
	resService   resource = 1 << iota // s: service-level APIs
	resContainer                      // c: tables
	resObject                         // o: entities
)

// rule says what an operation needs from a SAS: one of the resource types
// (account SAS only), and for each group at least one of its permissions.
type rule struct {
	resources resource
	needs     []perm
}

// The SAS rules of the operations, built once from shared/operation's
// table. An operation missing from a map may not be called with a SAS of
// that kind.
var (
	accountSASRules = sasRules(func(i operation.Info) *operation.SAS { return i.AccountSAS })
	tableSASRules   = sasRules(func(i operation.Info) *operation.SAS { return i.TableSAS })
)

func sasRules(sasOf func(operation.Info) *operation.SAS) map[Operation]rule {
	rules := make(map[Operation]rule)
	for _, op := range operation.All() {
		if s := sasOf(op.Info()); s != nil {
			rules[op] = sasRule(s)
		}
	}
	return rules
}

// sasRule is the rule of an operation.SAS.
func sasRule(s *operation.SAS) rule {
	r := rule{}
	for i := 0; i < len(s.Resources); i++ {
		switch s.Resources[i] {
		case 's':
			r.resources |= resService
		case 'c':
			r.resources |= resContainer
		case 'o':
			r.resources |= resObject
		}
	}
	for _, group := range s.Permissions {
		var p perm
		for i := 0; i < len(group); i++ {
			p |= permOf(group[i])
		}
		r.needs = append(r.needs, p)
	}
	return r
}

// grant is what a verified SAS allows.
type grant struct {
	perms     perm
	resources resource // account SAS only
	table     string   // table SAS only, as given in tn
	keys      keyRange // table SAS only
}

func (g *grant) hasAll(needs []perm) bool {
	for _, n := range needs {
		if g.perms&n == 0 {
			return false
		}
	}
	return true
}

func (g *grant) authorizeAccount(op Operation) error {
	r, ok := accountSASRules[op]
	if !ok {
		return apierr.Newf(apierr.AuthorizationFailure, "An account SAS cannot authorize %s.", op)
	}
	if g.resources&r.resources == 0 {
		return apierr.New(apierr.AuthorizationResourceTypeMismatch)
	}
	if !g.hasAll(r.needs) {
		return apierr.New(apierr.AuthorizationPermissionMismatch)
	}
	return nil
}

func (g *grant) authorizeTable(op Operation, table string) error {
	r, ok := tableSASRules[op]
	if !ok {
		return apierr.Newf(apierr.AuthorizationFailure, "A table SAS cannot authorize %s.", op)
	}
	// Table names are case-insensitive (and ASCII), so tn may differ in case
	// from the URL.
	if !strings.EqualFold(table, g.table) {
		return apierr.Newf(apierr.AuthorizationFailure, "The SAS is for table %q, not %q.", g.table, table)
	}
	if !g.hasAll(r.needs) {
		return apierr.New(apierr.AuthorizationPermissionMismatch)
	}
	return nil
}
