package deploy

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/tablebridge/tablebridge/shared/operation"
)

// PurgeFunctionName is the purge function's directory under functions/;
// template.yaml declares it as PurgeTablesFunction, run by a schedule.
const PurgeFunctionName = "purgetables"

// Function is one Lambda function: the routes API Gateway sends it, and,
// derived from shared/operation's table, the REST operations that arrive
// on those routes and the store methods those operations need. A request
// for any other operation is answered 405 MethodNotAllowed (shared/lambdafn
// guards the store), and the store methods decide the function's IAM policy
// (DynamoDBActions).
type Function struct {
	// Name is the directory under functions/ and build/.
	Name string
	// LogicalID is the AWS::Serverless::Function resource in template.yaml.
	LogicalID string
	Routes    []operation.Route
	// CatchAll marks the function that serves every operation: the whole
	// API behind a Function URL, and the $default route of an HTTP API
	// (requests no per-operation route matches).
	CatchAll bool
	// Operations are the operations whose routes are among Routes (every
	// operation for CatchAll), in shared/operation's order.
	Operations []operation.Operation
	// Store lists the store methods of Operations beyond the ones every
	// function may call (baseStoreMethods).
	Store []operation.StoreMethod
}

// functions is the deployment: one function per operation, or per group of
// operations API Gateway cannot tell apart by method and literal path.
// template.yaml declares the same functions and routes (a test compares
// them).
var functions = []Function{
	{Name: "querytables", LogicalID: "QueryTablesFunction", Routes: on(operation.ResourceTables, http.MethodGet)},
	{Name: "createtable", LogicalID: "CreateTableFunction", Routes: on(operation.ResourceTables, http.MethodPost)},
	// GET /acct/t(), /acct/t(PartitionKey=..,RowKey=..), /acct/Tables('t')
	// and /acct/t?comp=acl differ only inside one path segment or in
	// the query. HEAD is Get Table ACL's other verb.
	{Name: "readresource", LogicalID: "ReadResourceFunction", Routes: on(operation.ResourceAny, http.MethodGet, http.MethodHead)},
	// POST /acct/t inserts, POST /acct/$batch is a transaction ("$" is
	// not allowed in a literal path part), and POST with X-HTTP-Method
	// tunnels MERGE, PUT and DELETE of an entity for legacy clients. A
	// batch may be a lone GET.
	{Name: "insertorbatch", LogicalID: "InsertOrBatchFunction", Routes: on(operation.ResourceAny, http.MethodPost)},
	// PUT on an entity replaces it; PUT /acct/t?comp=acl sets the ACL.
	{Name: "updateentity", LogicalID: "UpdateEntityFunction", Routes: on(operation.ResourceAny, http.MethodPut)},
	// PATCH is how current SDKs merge. ANY catches the methods not
	// declared on the resource, which is where a literal MERGE would
	// arrive if API Gateway passed it on (docs/aws.md, "What API Gateway
	// changes").
	{Name: "mergeentity", LogicalID: "MergeEntityFunction", Routes: on(operation.ResourceAny, http.MethodPatch, operation.MethodAny)},
	// DELETE /acct/Tables('t') and DELETE of an entity.
	{Name: "deleteresource", LogicalID: "DeleteResourceFunction", Routes: on(operation.ResourceAny, http.MethodDelete)},
	// GET /acct/?restype=service&comp=properties|stats.
	{Name: "getservice", LogicalID: "GetServiceFunction", Routes: on(operation.ResourceAccount, http.MethodGet)},
	{Name: "setserviceproperties", LogicalID: "SetServicePropertiesFunction", Routes: on(operation.ResourceAccount, http.MethodPut)},
	{
		// CORS preflight on every resource; it reads the account's CORS
		// rules, which every function may.
		Name: "preflight", LogicalID: "PreflightFunction",
		Routes: operation.Preflight.Routes(),
	},
	{
		// Every operation in one function: the Function URL profile, and
		// the HTTP API's $default route (an HTTP API does not fold
		// "/acct/" onto "/{account}" as a REST API does).
		Name: "tableservice", LogicalID: "TableServiceFunction",
		CatchAll: true,
	},
}

// Profile is how clients reach the functions (template.yaml's Profile
// parameter).
type Profile string

const (
	// ProfileRESTAPI is an API Gateway REST API (payload format 1.0) with
	// one route per operation group: API keys, usage plans, WAF.
	ProfileRESTAPI Profile = "RestApi"
	// ProfileHTTPAPI is an API Gateway HTTP API (payload format 2.0) with
	// the same routes, and $default to the catch-all function.
	ProfileHTTPAPI Profile = "HttpApi"
	// ProfileFunctionURL is one Lambda function URL (payload format 2.0)
	// on the catch-all function.
	ProfileFunctionURL Profile = "FunctionUrl"
)

// catchAll returns the function that serves every operation.
func catchAll() Function {
	for _, f := range Functions() {
		if f.CatchAll {
			return f
		}
	}
	panic("deploy: no catch-all function") // functions always has one
}

// Functions returns every function of the deployment, in template order,
// with the operations and store methods shared/operation's table gives
// their routes.
func Functions() []Function {
	out := make([]Function, len(functions))
	for i, f := range functions {
		f.Routes = slices.Clone(f.Routes)
		for _, op := range operation.All() {
			info := op.Info()
			if !f.CatchAll && !slices.ContainsFunc(op.Routes(), func(r operation.Route) bool { return slices.Contains(f.Routes, r) }) {
				continue
			}
			f.Operations = append(f.Operations, op)
			for _, m := range info.Store {
				if !slices.Contains(f.Store, m) {
					f.Store = append(f.Store, m)
				}
			}
		}
		out[i] = f
	}
	return out
}

// on returns the routes of methods on one resource. The functions above
// group operations by the routes API Gateway can tell apart, which no one
// operation's Routes gives (readresource's GET and HEAD on ResourceAny
// serve four operations), so they list them by resource and method.
func on(resource string, methods ...string) []operation.Route {
	out := make([]operation.Route, len(methods))
	for i, m := range methods {
		out[i] = operation.Route{Method: m, Resource: resource}
	}
	return out
}

// baseStoreMethods are needed by every function whatever it serves: a table
// SAS naming a stored access policy (si) is checked against the table's ACL
// (GetTable), and any request with an Origin header is checked against the
// account's CORS rules (GetServiceProperties).
var baseStoreMethods = []operation.StoreMethod{operation.StoreGetTable, operation.StoreGetServiceProperties}

// FunctionByName returns the function named name (its functions/ directory).
func FunctionByName(name string) (Function, error) {
	for _, f := range Functions() {
		if f.Name == name {
			return f, nil
		}
	}
	return Function{}, fmt.Errorf("deploy: no function %q", name)
}

// Serves reports whether the function serves the operation.
func (f Function) Serves(op operation.Operation) bool { return slices.Contains(f.Operations, op) }

// StoreMethods returns every store method the function may call: its own
// and the ones every function needs.
func (f Function) StoreMethods() []operation.StoreMethod {
	out := slices.Clone(baseStoreMethods)
	for _, m := range f.Store {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// RouteForProfile returns the function that receives a request with
// method and a path below the stage (or base path) in profile, and the
// route key API Gateway names ("GET /{account}/{resource}", "$default",
// or "" for a Function URL). ok is false when nothing receives it (a REST
// API answers 403 Missing Authentication Token).
func RouteForProfile(profile Profile, method, path string) (Function, string, map[string]string, bool) {
	switch profile {
	case ProfileFunctionURL:
		return catchAll(), "", nil, true
	case ProfileHTTPAPI:
		// An HTTP API matches paths exactly: "/acct/" is not "/{account}".
		if path != "/" && strings.HasSuffix(path, "/") {
			return catchAll(), "$default", nil, true
		}
		if fn, route, params, ok := RouteFor(method, path); ok {
			return fn, route.String(), params, true
		}
		return catchAll(), "$default", nil, true
	}
	fn, route, params, ok := RouteFor(method, path)
	return fn, route.String(), params, ok
}

// RouteFor returns the function and route API Gateway picks for a request
// with method and a path below the stage (or base path), following the
// routes of Functions: an explicit method on the resource wins over ANY.
// params are the path parameters, percent-decoded as API Gateway delivers
// them.
func RouteFor(method, path string) (fn Function, route operation.Route, params map[string]string, ok bool) {
	resource, params, ok := matchResource(path)
	if !ok {
		return Function{}, operation.Route{}, nil, false
	}
	var anyFn Function
	haveAny := false
	for _, f := range Functions() {
		for _, r := range f.Routes {
			if r.Resource != resource {
				continue
			}
			if r.Method == method {
				return f, r, params, true
			}
			if r.Method == operation.MethodAny {
				anyFn, haveAny = f, true
			}
		}
	}
	if haveAny {
		return anyFn, operation.Route{Method: operation.MethodAny, Resource: resource}, params, true
	}
	return Function{}, operation.Route{}, nil, false
}
