package httpapi

import (
	"net/http"
	"net/url"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// endpoint is how the REST layer serves an operation (shared/operation
// has its name, authorization, how its requests look and the rest).
type endpoint struct {
	json  bool // takes JSON entity payloads (a $batch body is multipart)
	serve func(h *Handler, c *call) (*response, error)
}

// endpoints holds the handler of every operation that resolveOperation can
// return (all but Preflight, which serve answers first), indexed by
// operation; a test checks that none is missing.
var endpoints = [...]endpoint{
	operation.QueryTables:            {json: true, serve: (*Handler).queryTables},
	operation.CreateTable:            {json: true, serve: (*Handler).createTable},
	operation.DeleteTable:            {json: true, serve: (*Handler).deleteTable},
	operation.GetTable:               {json: true, serve: (*Handler).getTable},
	operation.QueryEntities:          {json: true, serve: (*Handler).queryEntities},
	operation.GetEntity:              {json: true, serve: (*Handler).getEntity},
	operation.InsertEntity:           {json: true, serve: (*Handler).insertEntity},
	operation.UpdateEntity:           {json: true, serve: (*Handler).updateEntity},
	operation.MergeEntity:            {json: true, serve: (*Handler).updateEntity},
	operation.InsertOrReplaceEntity:  {json: true, serve: (*Handler).updateEntity},
	operation.InsertOrMergeEntity:    {json: true, serve: (*Handler).updateEntity},
	operation.DeleteEntity:           {json: true, serve: (*Handler).deleteEntity},
	operation.EntityGroupTransaction: {serve: (*Handler).batch},
	operation.GetTableACL:            {serve: (*Handler).getTableACL},
	operation.SetTableACL:            {serve: (*Handler).setTableACL},
	operation.GetServiceProperties:   {serve: (*Handler).getServiceProperties},
	operation.SetServiceProperties:   {serve: (*Handler).setServiceProperties},
	operation.GetServiceStats:        {serve: (*Handler).getServiceStats},
}

// resolveOperation maps method, resource and query to an operation
// through shared/operation's table, and answers as Azure does when none
// matches.
func resolveOperation(r *http.Request, res resource, q url.Values) (operation.Operation, error) {
	method, tunnelErr := operation.EffectiveMethod(r.Method, r.Header)
	if tunnelErr != nil {
		return 0, tunnelErr
	}
	// "If-None-Match HTTP header cannot be specified for PUT operations"
	// (Table service error codes); likewise for MERGE and DELETE, which
	// have no use for it. Azure refuses it before it looks at the verb.
	if res.kind == operation.PathEntity && method != http.MethodGet && r.Header.Get("If-None-Match") != "" {
		return 0, &apierr.Error{Code: apierr.InvalidInput,
			Message: "If-None-Match HTTP header cannot be specified for " + method + " operations."}
	}
	comp := q.Get("comp")
	op, miss := operation.Resolve(res.kind, method, q.Get("restype"), comp, r.Header)
	switch miss {
	case operation.Matched:
		return op, nil
	case operation.WrongRestype:
		return 0, apierr.New(apierr.InvalidURI)
	case operation.WrongComp:
		return 0, apierr.Newf(apierr.InvalidQueryParameterValue, "comp=%s", comp)
	}
	return 0, apierr.Newf(apierr.UnsupportedHTTPVerb, "The resource doesn't support %s.", method)
}
