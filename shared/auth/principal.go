package auth

import (
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
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

// Operation is a Table service REST operation, as far as authorization
// tells them apart.
type Operation int

// Operations. Update Entity without If-Match is Insert Or Replace Entity,
// and Merge Entity without If-Match is Insert Or Merge Entity: the caller
// passes the operation the service will actually perform, because the
// upserts need both add and update permission.
const (
	QueryTables Operation = iota + 1
	CreateTable
	DeleteTable
	QueryEntities // Query Entities, $filter queries and paging
	GetEntity     // a point query, t(PartitionKey='a',RowKey='b')
	InsertEntity
	UpdateEntity
	MergeEntity
	InsertOrReplaceEntity
	InsertOrMergeEntity
	DeleteEntity
	GetTableACL
	SetTableACL
	GetServiceProperties
	SetServiceProperties
	GetServiceStats
)

var operationNames = map[Operation]string{
	QueryTables:           "QueryTables",
	CreateTable:           "CreateTable",
	DeleteTable:           "DeleteTable",
	QueryEntities:         "QueryEntities",
	GetEntity:             "GetEntity",
	InsertEntity:          "InsertEntity",
	UpdateEntity:          "UpdateEntity",
	MergeEntity:           "MergeEntity",
	InsertOrReplaceEntity: "InsertOrReplaceEntity",
	InsertOrMergeEntity:   "InsertOrMergeEntity",
	DeleteEntity:          "DeleteEntity",
	GetTableACL:           "GetTableACL",
	SetTableACL:           "SetTableACL",
	GetServiceProperties:  "GetServiceProperties",
	SetServiceProperties:  "SetServiceProperties",
	GetServiceStats:       "GetServiceStats",
}

func (o Operation) String() string {
	if n, ok := operationNames[o]; ok {
		return n
	}
	return "Unknown"
}

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

// rule says what an operation needs from an account SAS: one of the
// resource types, and for each group at least one of its permissions.
type rule struct {
	resources resource
	needs     []perm
}

// accountRules is the "Table service" table of "Create an account SAS"
// (Account SAS permissions by operation). Query Tables is listed there
// under Container (c) while the srt description lists "List ... Tables"
// under Service (s); either is accepted. The ACL operations are absent from
// the table: only the account owner may call them.
var accountRules = map[Operation]rule{
	GetServiceProperties:  {resService, []perm{permRead}},
	SetServiceProperties:  {resService, []perm{permWrite}},
	GetServiceStats:       {resService, []perm{permRead}},
	QueryTables:           {resService | resContainer, []perm{permList}},
	CreateTable:           {resContainer, []perm{permCreate | permWrite}},
	DeleteTable:           {resContainer, []perm{permDelete}},
	QueryEntities:         {resObject, []perm{permRead}},
	GetEntity:             {resObject, []perm{permRead}},
	InsertEntity:          {resObject, []perm{permAdd}},
	InsertOrMergeEntity:   {resObject, []perm{permAdd, permUpdate}},
	InsertOrReplaceEntity: {resObject, []perm{permAdd, permUpdate}},
	UpdateEntity:          {resObject, []perm{permUpdate}},
	MergeEntity:           {resObject, []perm{permUpdate}},
	DeleteEntity:          {resObject, []perm{permDelete}},
}

// tableRules is the "Permissions for a table" table of "Create a service
// SAS": r query, a add, u update, d delete; "Add and Update permissions are
// required for upsert operations". A service SAS cannot create, delete or
// list tables, nor reach service-level operations.
var tableRules = map[Operation][]perm{
	QueryEntities:         {permRead},
	GetEntity:             {permRead},
	InsertEntity:          {permAdd},
	InsertOrMergeEntity:   {permAdd, permUpdate},
	InsertOrReplaceEntity: {permAdd, permUpdate},
	UpdateEntity:          {permUpdate},
	MergeEntity:           {permUpdate},
	DeleteEntity:          {permDelete},
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
	r, ok := accountRules[op]
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
	needs, ok := tableRules[op]
	if !ok {
		return apierr.Newf(apierr.AuthorizationFailure, "A table SAS cannot authorize %s.", op)
	}
	// Table names are case-insensitive (and ASCII), so tn may differ in case
	// from the URL.
	if !strings.EqualFold(table, g.table) {
		return apierr.Newf(apierr.AuthorizationFailure, "The SAS is for table %q, not %q.", g.table, table)
	}
	if !g.hasAll(needs) {
		return apierr.New(apierr.AuthorizationPermissionMismatch)
	}
	return nil
}
