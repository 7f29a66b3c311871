package operation

import (
	"net/http"
	"slices"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
)

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

// Path is the shape of a request path below the account, as shared/httpapi
// parses it (the URL grammar of "Table service REST API").
type Path uint8

// The path shapes.
const (
	PathService  Path = iota + 1 // "/": service properties and stats
	PathTables                   // "Tables"
	PathTable                    // "Tables('t')"
	PathBatch                    // "$batch"
	PathEntities                 // "t" or "t()"
	PathEntity                   // "t(PartitionKey='a',RowKey='b')"
)

// IfMatch is what an operation requires of the If-Match header.
type IfMatch uint8

// The If-Match requirements. Update Entity and Merge Entity carry
// If-Match; without it the same request is Insert Or Replace Entity or
// Insert Or Merge Entity ("Insert Or Merge Entity": "called without the
// If-Match header").
const (
	IfMatchAny IfMatch = iota
	IfMatchPresent
	IfMatchAbsent
)

// Request is what tells an operation's requests apart: the path shape, the
// method after verb tunnelling (a POST with X-HTTP-Method is that method),
// the restype and comp query parameters, and If-Match.
type Request struct {
	// Path is the shape; 0 for Preflight, which httpapi answers for every
	// OPTIONS request on any path before anything else.
	Path    Path
	Methods []string
	// Restype is the restype the shape's requests must name ("service"):
	// without it Azure answers 400 InvalidUri.
	Restype string
	// Comp is the comp query parameter it requires. An entry without one
	// takes the requests whose comp no entry of its shape claims (a Query
	// Entities with comp=foo is still Query Entities).
	Comp    string
	IfMatch IfMatch
}

// Mismatch says why Resolve found no operation.
type Mismatch uint8

// The reasons, in the order Resolve checks them.
const (
	Matched      Mismatch = iota
	WrongRestype          // the shape needs a restype the request does not name
	WrongComp             // every operation of the shape needs a comp, and not this one
	WrongMethod           // no operation of the shape and comp takes this method
)

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
	// Request is how the HTTP layer recognises its requests (Resolve);
	// the API Gateway routes it arrives on derive from it (Routes).
	Request Request
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
	// merge is the legacy SDKs' verb for Merge Entity, not one of net/http's.
	merge = "MERGE"
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
		Request: Request{Path: PathTables, Methods: []string{get}}, Store: []StoreMethod{StoreQueryTables}},
	CreateTable: {Name: "CreateTable", AccountSAS: sas("c", "cw"), Token: RoleContributor,
		Request: Request{Path: PathTables, Methods: []string{post}}, Store: []StoreMethod{StoreCreateTable}},
	DeleteTable: {Name: "DeleteTable", AccountSAS: sas("c", "d"), Token: RoleContributor,
		Request: Request{Path: PathTable, Methods: []string{del}}, Store: []StoreMethod{StoreDeleteTable}},
	GetTable: {Name: "GetTable", AuthorizedAs: QueryTables, ReadsOnly: true,
		Request: Request{Path: PathTable, Methods: []string{get}}},
	QueryEntities: {Name: "QueryEntities", AccountSAS: sas("o", "r"), TableSAS: sas("", "r"), Token: RoleReader, ReadsOnly: true,
		Request: Request{Path: PathEntities, Methods: []string{get}}, Store: []StoreMethod{StoreQueryEntities}},
	GetEntity: {Name: "GetEntity", AccountSAS: sas("o", "r"), TableSAS: sas("", "r"), Token: RoleReader, ReadsOnly: true,
		Request: Request{Path: PathEntity, Methods: []string{get}}, Store: []StoreMethod{StoreGetEntity}},
	InsertEntity: {Name: "InsertEntity", AccountSAS: sas("o", "a"), TableSAS: sas("", "a"), Token: RoleContributor,
		Request: Request{Path: PathEntities, Methods: []string{post}}, Store: []StoreMethod{StoreWrite}},
	UpdateEntity: {Name: "UpdateEntity", AccountSAS: sas("o", "u"), TableSAS: sas("", "u"), Token: RoleContributor,
		Request: Request{Path: PathEntity, Methods: []string{put}, IfMatch: IfMatchPresent}, Store: []StoreMethod{StoreWrite}},
	MergeEntity: {Name: "MergeEntity", AccountSAS: sas("o", "u"), TableSAS: sas("", "u"), Token: RoleContributor,
		Request: Request{Path: PathEntity, Methods: []string{patch, merge}, IfMatch: IfMatchPresent}, Store: []StoreMethod{StoreWrite}},
	InsertOrReplaceEntity: {Name: "InsertOrReplaceEntity", AccountSAS: sas("o", "a", "u"), TableSAS: sas("", "a", "u"), Token: RoleContributor,
		Request: Request{Path: PathEntity, Methods: []string{put}, IfMatch: IfMatchAbsent}, Store: []StoreMethod{StoreWrite}},
	InsertOrMergeEntity: {Name: "InsertOrMergeEntity", AccountSAS: sas("o", "a", "u"), TableSAS: sas("", "a", "u"), Token: RoleContributor,
		Request: Request{Path: PathEntity, Methods: []string{patch, merge}, IfMatch: IfMatchAbsent}, Store: []StoreMethod{StoreWrite}},
	DeleteEntity: {Name: "DeleteEntity", AccountSAS: sas("o", "d"), TableSAS: sas("", "d"), Token: RoleContributor,
		Request: Request{Path: PathEntity, Methods: []string{del}}, Store: []StoreMethod{StoreWrite}},
	// A batch is a changeset of entity writes, or a lone GET of an entity
	// or of a query ("Performing entity group transactions").
	EntityGroupTransaction: {Name: "EntityGroupTransaction", Unauthorized: true,
		Request: Request{Path: PathBatch, Methods: []string{post}}, Store: []StoreMethod{StoreWrite, StoreGetEntity, StoreQueryEntities}},
	// HEAD is Get Table ACL's other verb.
	GetTableACL: {Name: "GetTableACL", ReadsOnly: true, Request: Request{Path: PathEntities, Methods: []string{get, head}, Comp: "acl"}},
	SetTableACL: {Name: "SetTableACL", Request: Request{Path: PathEntities, Methods: []string{put}, Comp: "acl"}, Store: []StoreMethod{StoreSetTableACL}},
	GetServiceProperties: {Name: "GetServiceProperties", AccountSAS: sas("s", "r"), ReadsOnly: true,
		Request: Request{Path: PathService, Methods: []string{get}, Restype: "service", Comp: "properties"}},
	SetServiceProperties: {Name: "SetServiceProperties", AccountSAS: sas("s", "w"),
		Request: Request{Path: PathService, Methods: []string{put}, Restype: "service", Comp: "properties"}, Store: []StoreMethod{StoreSetServiceProperties}},
	GetServiceStats: {Name: "GetServiceStats", AccountSAS: sas("s", "r"), ReadsOnly: true,
		Request: Request{Path: PathService, Methods: []string{get}, Restype: "service", Comp: "stats"}},
	// CORS preflight on every resource; it reads the account's CORS rules.
	Preflight: {Name: "Preflight", Unauthorized: true, ReadsOnly: true,
		Request: Request{Methods: []string{options}}},
}

// Authorization returns the operation whose permissions a principal must
// have, or 0 when the request as a whole needs none of its own (a $batch,
// whose operations are authorized one by one; a preflight).
func (o Operation) Authorization() Operation {
	i := o.entry()
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
func (o Operation) Info() Info { return *o.entry() }

// entry is the operation's entry without a copy of it, for what each
// request and each operation of a batch asks.
func (o Operation) entry() *Info {
	if o == 0 || o >= end {
		return &noInfo
	}
	return &table[o]
}

// noInfo is the entry of an unknown operation.
var noInfo Info

func (o Operation) String() string {
	if o == 0 || o >= end {
		return "Unknown"
	}
	return table[o].Name
}

// byPath lists the operations of each path shape in table order: Resolve,
// which every request calls, looks at those alone.
var byPath = func() (out [PathEntity + 1][]Operation) {
	for op := Operation(1); op < end; op++ {
		if p := table[op].Request.Path; p != 0 {
			out[p] = append(out[p], op)
		}
	}
	return out
}()

// Resolve finds the operation of a request from its path shape, its method
// after verb tunnelling, its restype and comp query parameters and, where
// an entry asks, whether its header carries If-Match; Mismatch says why
// none matched. Preflight is never
// resolved here (see Request.Path).
func Resolve(path Path, method, restype, comp string, header http.Header) (Operation, Mismatch) {
	if path == 0 || int(path) >= len(byPath) {
		return 0, WrongMethod // Preflight's shape: not a path any request has
	}
	ops := byPath[path]
	needRestype, restypeOK, compClaimed := false, false, false
	for _, op := range ops {
		r := &table[op].Request
		if r.Restype != "" {
			needRestype = true
			restypeOK = restypeOK || r.Restype == restype
		}
		compClaimed = compClaimed || comp != "" && r.Comp == comp
	}
	if needRestype && !restypeOK {
		return 0, WrongRestype
	}
	if !compClaimed {
		comp = ""
	}
	miss := WrongComp
	for _, op := range ops {
		r := &table[op].Request
		if r.Comp != comp {
			continue
		}
		miss = WrongMethod
		if !slices.Contains(r.Methods, method) {
			continue
		}
		// Only the entity writes look at If-Match, so only they pay for
		// reading it.
		if r.IfMatch != IfMatchAny && (r.IfMatch == IfMatchPresent) != (header.Get("If-Match") != "") {
			continue
		}
		return op, Matched
	}
	return 0, miss
}

// WritesEntity reports whether the operation writes one entity: Insert,
// Update, Merge, Insert Or Replace, Insert Or Merge and Delete Entity,
// the operations the changeset of an entity group transaction carries
// ("Performing entity group transactions"). It is read from the entry: an
// entity request (onEntities) that calls the store's Write.
func (o Operation) WritesEntity() bool {
	i := o.entry()
	return onEntities(&i.Request) && slices.Contains(i.Store, StoreWrite)
}

// ReadsEntities reports whether the operation reads a table's entities:
// Query Entities and Get Entity, one of which a batch may hold alone. It
// is read from the entry: an entity request (onEntities) that calls the
// store's entity reads.
func (o Operation) ReadsEntities() bool {
	i := o.entry()
	return onEntities(&i.Request) &&
		(slices.Contains(i.Store, StoreQueryEntities) || slices.Contains(i.Store, StoreGetEntity))
}

// onEntities reports whether r is an OData request on a table's entities,
// the kind a batch carries: the entity set or one entity, without the comp
// of the table's own REST operations (?comp=acl).
func onEntities(r *Request) bool {
	return (r.Path == PathEntities || r.Path == PathEntity) && r.Comp == ""
}

// EffectiveMethod returns the method a request performs, which is what
// Request.Methods list: its own, or the one a POST names in
// X-HTTP-Method. Legacy clients tunnel MERGE, and PUT and DELETE, through
// POST for proxies that pass only standard verbs ("Merge Entity"), in a
// request of its own and in a changeset alike. Azure refuses a tunnel on
// another verb (XMethodNotUsingPost), more than one (XMethodIncorrectCount)
// and a verb no entity operation tunnels (XMethodIncorrectValue).
func EffectiveMethod(method string, header http.Header) (string, *apierr.Error) {
	tunnel := header["X-Http-Method"] // X-HTTP-Method, canonically spelled
	if len(tunnel) == 0 {
		return method, nil
	}
	if len(tunnel) > 1 {
		return "", apierr.New(apierr.XMethodIncorrectCount)
	}
	if method != post {
		return "", apierr.New(apierr.XMethodNotUsingPost)
	}
	switch m := strings.ToUpper(strings.TrimSpace(tunnel[0])); m {
	case merge, put, del, patch:
		return m, nil
	}
	return "", apierr.New(apierr.XMethodIncorrectValue)
}

// Routes returns the API Gateway routes the operation arrives on, derived
// from its Request. The service path is ResourceAccount, Tables
// ResourceTables, every other shape ResourceAny (see the resources). A
// method API Gateway does not know (MERGE) arrives on ANY. Legacy clients
// tunnel an entity's PUT, MERGE and DELETE through POST with X-HTTP-Method
// ("Merge Entity"), so every entity operation but GET arrives on POST too;
// httpapi tells them apart by X-HTTP-Method. A preflight
// arrives on every resource.
func (o Operation) Routes() []Route {
	r := o.Info().Request
	var resources []string
	switch r.Path {
	case 0:
		resources = []string{ResourceAccount, ResourceTables, ResourceAny}
	case PathService:
		resources = []string{ResourceAccount}
	case PathTables:
		resources = []string{ResourceTables}
	default:
		resources = []string{ResourceAny}
	}
	var out []Route
	add := func(m, res string) {
		if rt := (Route{m, res}); !slices.Contains(out, rt) {
			out = append(out, rt)
		}
	}
	for _, res := range resources {
		for _, m := range r.Methods {
			switch m {
			case get, head, post, put, patch, del, options:
				add(m, res)
			default:
				add(MethodAny, res)
			}
		}
		if r.Path == PathEntity && slices.ContainsFunc(r.Methods, func(m string) bool { return m != get }) {
			add(post, res)
		}
	}
	return out
}
