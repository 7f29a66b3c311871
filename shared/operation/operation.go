package operation

import "net/http"

// Operation is one REST operation of the Table service.
type Operation uint8

// The operations. Update Entity and Merge Entity without If-Match are
// Insert Or Replace Entity and Insert Or Merge Entity: the upserts need
// both add and update permission.
const (
	QueryTables Operation = iota + 1
	CreateTable
	DeleteTable
	GetTable
	QueryEntities // Query Entities, $filter queries and paging
	GetEntity     // a point query, t(PartitionKey='a',RowKey='b')
	InsertEntity
	UpdateEntity
	MergeEntity
	InsertOrReplaceEntity
	InsertOrMergeEntity
	DeleteEntity
	EntityGroupTransaction // $batch; its operations are authorized one by one
	GetTableACL
	SetTableACL
	GetServiceProperties
	SetServiceProperties
	GetServiceStats
	Preflight // a CORS preflight (OPTIONS), answered from the CORS rules
	end
)

// API Gateway resources (route templates). Path parameters are whole
// segments and literal path parts may only hold [A-Za-z0-9._-], so
// "Tables('t')", "t()", "t(PartitionKey='a',RowKey='b')" and "$batch" all
// land on ResourceAny; only "Tables" is a literal. A REST API routes
// "/acct/" (the service endpoint the SDKs call, with a trailing slash) to
// ResourceAccount as well: it ignores one trailing slash.
const (
	ResourceAccount = "/{account}"
	ResourceTables  = "/{account}/Tables"
	ResourceAny     = "/{account}/{resource}"
)

// MethodAny is API Gateway's catch-all method: it receives every method
// not declared on its resource, which is where a literal MERGE would
// arrive if API Gateway passed it on.
const MethodAny = "ANY"

// Route is one API Gateway method: an HTTP method on a resource.
type Route struct {
	Method   string
	Resource string
}

func (r Route) String() string { return r.Method + " " + r.Resource }

// SAS is what an operation needs from a shared access signature, in
// Azure's letters: Resources lists the account SAS resource types (srt)
// of which one suffices ("s", "c", "o"), and each entry of Permissions is
// a group of permission letters of which the signature must hold at least
// one ("cw": create or write).
type SAS struct {
	Resources   string
	Permissions []string
}

// Role is the Azure built-in data role a bearer token needs: "Storage
// Table Data Reader" or "Storage Table Data Contributor".
type Role uint8

// Roles, in increasing order of what they allow. RoleNone: no data role
// allows the operation; only the account owner (Shared Key) may call it.
const (
	RoleNone Role = iota
	RoleReader
	RoleContributor
)

// Info describes an operation.
type Info struct {
	// Name is how logs and errors name it.
	Name string
	// AuthorizedAs is the operation whose permissions authorize it when
	// not its own (Get Table is authorized as Query Tables).
	AuthorizedAs Operation
	// Unauthorized: the request as a whole needs no authorization of its
	// own (see Authorization).
	Unauthorized bool
	// AccountSAS is Azure's "Account SAS permissions by operation"; nil:
	// no account SAS may call it.
	AccountSAS *SAS
	// TableSAS is the permissions of a service SAS for a table; nil: no
	// table SAS may call it.
	TableSAS *SAS
	// Token is the data role a bearer token needs.
	Token Role
	// ReadsOnly: it leaves the account unchanged, so the account's
	// read-only secondary location serves it.
	ReadsOnly bool
	// Routes are the API Gateway routes it arrives on, verb tunnelling
	// (POST with X-HTTP-Method) included.
	Routes []Route
	// Store lists the store methods (of shared/store's Store) it calls
	// beyond GetTable and GetServiceProperties, which every request may
	// call (a stored access policy, the CORS rules).
	Store []StoreMethod
}

var (
	get     = http.MethodGet
	head    = http.MethodHead
	post    = http.MethodPost
	put     = http.MethodPut
	patch   = http.MethodPatch
	del     = http.MethodDelete
	options = http.MethodOptions
)

// StoreMethod names a method of store.Store.
type StoreMethod string

// The store methods, as named in store.Store.
const (
	StoreCreateTable          StoreMethod = "CreateTable"
	StoreDeleteTable          StoreMethod = "DeleteTable"
	StoreGetTable             StoreMethod = "GetTable"
	StoreQueryTables          StoreMethod = "QueryTables"
	StoreSetTableACL          StoreMethod = "SetTableACL"
	StoreGetEntity            StoreMethod = "GetEntity"
	StoreQueryEntities        StoreMethod = "QueryEntities"
	StoreWrite                StoreMethod = "Write"
	StoreGetServiceProperties StoreMethod = "GetServiceProperties"
	StoreSetServiceProperties StoreMethod = "SetServiceProperties"
)

func routes(resource string, methods ...string) []Route {
	out := make([]Route, len(methods))
	for i, m := range methods {
		out[i] = Route{m, resource}
	}
	return out
}

func sas(resources string, perms ...string) *SAS { return &SAS{resources, perms} }

// table is the operations. The account SAS entries are the "Table
// service" table of "Create an account SAS": Query Tables is listed there
// under Container (c) while the srt description lists "List ... Tables"
// under Service (s), so either is accepted; the ACL operations are absent,
// as only the account owner may call them. The table SAS entries are the
// "Permissions for a table" of "Create a service SAS" (r query, a add, u
// update, d delete; "Add and Update permissions are required for upsert
// operations"); a service SAS cannot create, delete or list tables, nor
// reach service-level operations. The token roles are those of the
// built-in Table data roles, which hold no ACL or service actions.
var table = [end]Info{
	QueryTables: {Name: "QueryTables", AccountSAS: sas("sc", "l"), Token: RoleReader, ReadsOnly: true,
		Routes: routes(ResourceTables, get), Store: []StoreMethod{StoreQueryTables}},
	CreateTable: {Name: "CreateTable", AccountSAS: sas("c", "cw"), Token: RoleContributor,
		Routes: routes(ResourceTables, post), Store: []StoreMethod{StoreCreateTable}},
	DeleteTable: {Name: "DeleteTable", AccountSAS: sas("c", "d"), Token: RoleContributor,
		Routes: routes(ResourceAny, del), Store: []StoreMethod{StoreDeleteTable}},
	GetTable: {Name: "GetTable", AuthorizedAs: QueryTables, ReadsOnly: true,
		Routes: routes(ResourceAny, get)},
	QueryEntities: {Name: "QueryEntities", AccountSAS: sas("o", "r"), TableSAS: sas("", "r"), Token: RoleReader, ReadsOnly: true,
		Routes: routes(ResourceAny, get), Store: []StoreMethod{StoreQueryEntities}},
	GetEntity: {Name: "GetEntity", AccountSAS: sas("o", "r"), TableSAS: sas("", "r"), Token: RoleReader, ReadsOnly: true,
		Routes: routes(ResourceAny, get), Store: []StoreMethod{StoreGetEntity}},
	InsertEntity: {Name: "InsertEntity", AccountSAS: sas("o", "a"), TableSAS: sas("", "a"), Token: RoleContributor,
		Routes: routes(ResourceAny, post), Store: []StoreMethod{StoreWrite}},
	UpdateEntity: {Name: "UpdateEntity", AccountSAS: sas("o", "u"), TableSAS: sas("", "u"), Token: RoleContributor,
		Routes: routes(ResourceAny, put, post), Store: []StoreMethod{StoreWrite}},
	MergeEntity: {Name: "MergeEntity", AccountSAS: sas("o", "u"), TableSAS: sas("", "u"), Token: RoleContributor,
		Routes: routes(ResourceAny, patch, MethodAny, post), Store: []StoreMethod{StoreWrite}},
	InsertOrReplaceEntity: {Name: "InsertOrReplaceEntity", AccountSAS: sas("o", "a", "u"), TableSAS: sas("", "a", "u"), Token: RoleContributor,
		Routes: routes(ResourceAny, put, post), Store: []StoreMethod{StoreWrite}},
	InsertOrMergeEntity: {Name: "InsertOrMergeEntity", AccountSAS: sas("o", "a", "u"), TableSAS: sas("", "a", "u"), Token: RoleContributor,
		Routes: routes(ResourceAny, patch, MethodAny, post), Store: []StoreMethod{StoreWrite}},
	DeleteEntity: {Name: "DeleteEntity", AccountSAS: sas("o", "d"), TableSAS: sas("", "d"), Token: RoleContributor,
		Routes: routes(ResourceAny, del, post), Store: []StoreMethod{StoreWrite}},
	// A batch may be a lone GET of an entity.
	EntityGroupTransaction: {Name: "EntityGroupTransaction", Unauthorized: true,
		Routes: routes(ResourceAny, post), Store: []StoreMethod{StoreWrite, StoreGetEntity}},
	// HEAD is Get Table ACL's other verb.
	GetTableACL: {Name: "GetTableACL", ReadsOnly: true, Routes: routes(ResourceAny, get, head)},
	SetTableACL: {Name: "SetTableACL", Routes: routes(ResourceAny, put), Store: []StoreMethod{StoreSetTableACL}},
	GetServiceProperties: {Name: "GetServiceProperties", AccountSAS: sas("s", "r"), ReadsOnly: true,
		Routes: routes(ResourceAccount, get)},
	SetServiceProperties: {Name: "SetServiceProperties", AccountSAS: sas("s", "w"),
		Routes: routes(ResourceAccount, put), Store: []StoreMethod{StoreSetServiceProperties}},
	GetServiceStats: {Name: "GetServiceStats", AccountSAS: sas("s", "r"), ReadsOnly: true,
		Routes: routes(ResourceAccount, get)},
	// CORS preflight on every resource; it reads the account's CORS rules.
	Preflight: {Name: "Preflight", Unauthorized: true, ReadsOnly: true,
		Routes: append(routes(ResourceAccount, options), Route{options, ResourceTables}, Route{options, ResourceAny})},
}

// Authorization returns the operation whose permissions a principal must
// have, or 0 when the request as a whole needs none of its own (a $batch,
// whose operations are authorized one by one; a preflight).
func (o Operation) Authorization() Operation {
	i := o.Info()
	switch {
	case i.Unauthorized:
		return 0
	case i.AuthorizedAs != 0:
		return i.AuthorizedAs
	}
	return o
}

// All returns every operation, in the table's order.
func All() []Operation {
	out := make([]Operation, 0, end-1)
	for op := Operation(1); op < end; op++ {
		out = append(out, op)
	}
	return out
}

// Info returns the operation's entry; the zero Info for an unknown one.
func (o Operation) Info() Info {
	if o == 0 || o >= end {
		return Info{}
	}
	return table[o]
}

func (o Operation) String() string {
	if o == 0 || o >= end {
		return "Unknown"
	}
	return table[o].Name
}
