package httpapi

import (
	"net/http"
	"net/url"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// endpoint is how the REST layer serves an operation (shared/operation
// has its name, authorization, how its requests look and the rest).
type endpoint struct {
	json  bool // takes JSON entity payloads (a $batch body is multipart)
	serve func(h *Handler, c *call) (*response, error)
	// part prepares the operation's answer inside a changeset: set for
	// the entity writes (operation.Operation.WritesEntity), the operations
	// a changeset carries. It runs before the transaction is applied, so a
	// part that cannot be answered (an Accept no answer can meet) fails
	// the transaction instead of being applied and then refused; the
	// answer it returns is built from the entity written and the
	// transaction's ETag.
	part func(c *call, part *batch.Operation) (partAnswer, error)
}

// partAnswer is a changeset operation's answer, once it is applied.
type partAnswer func(e *model.Entity, etag string) batch.Response

// endpoints holds the handler of every operation that resolveOperation can
// return (all but Preflight, which serve answers first), indexed by
// operation; a test checks that none is missing.
var endpoints []endpoint

// init fills endpoints: the batch handler serves its operations through
// them, a reference Go refuses as an initialization cycle in the
// declaration.
func init() {
	endpoints = []endpoint{
		operation.QueryTables:            {json: true, serve: (*Handler).queryTables},
		operation.CreateTable:            {json: true, serve: (*Handler).createTable},
		operation.DeleteTable:            {json: true, serve: (*Handler).deleteTable},
		operation.GetTable:               {json: true, serve: (*Handler).getTable},
		operation.QueryEntities:          {json: true, serve: (*Handler).queryEntities},
		operation.GetEntity:              {json: true, serve: (*Handler).getEntity},
		operation.InsertEntity:           {json: true, serve: (*Handler).insertEntity, part: insertedPart},
		operation.UpdateEntity:           {json: true, serve: (*Handler).updateEntity, part: updatedPart},
		operation.MergeEntity:            {json: true, serve: (*Handler).updateEntity, part: updatedPart},
		operation.InsertOrReplaceEntity:  {json: true, serve: (*Handler).updateEntity, part: updatedPart},
		operation.InsertOrMergeEntity:    {json: true, serve: (*Handler).updateEntity, part: updatedPart},
		operation.DeleteEntity:           {json: true, serve: (*Handler).deleteEntity, part: deletedPart},
		operation.EntityGroupTransaction: {serve: (*Handler).batch},
		operation.GetTableACL:            {serve: (*Handler).getTableACL},
		operation.SetTableACL:            {serve: (*Handler).setTableACL},
		operation.GetServiceProperties:   {serve: (*Handler).getServiceProperties},
		operation.SetServiceProperties:   {serve: (*Handler).setServiceProperties},
		operation.GetServiceStats:        {serve: (*Handler).getServiceStats},
	}
}

// resolveOperation maps a request to its operation: its method after
// X-HTTP-Method tunnelling (operation.EffectiveMethod), then resolve.
func resolveOperation(r *http.Request, res resource, q url.Values) (operation.Operation, error) {
	method, tunnelErr := operation.EffectiveMethod(r.Method, r.Header)
	if tunnelErr != nil {
		return 0, tunnelErr
	}
	return resolve(res, method, q.Get("restype"), q.Get("comp"), r.Header)
}

// resolve maps a request's path shape, method (after tunnelling), restype,
// comp and headers to an operation through shared/operation's table, and
// answers as Azure does when none matches. A request of its own and an
// operation of a batch resolve here alike.
func resolve(res resource, method, restype, comp string, header http.Header) (operation.Operation, error) {
	// "If-None-Match HTTP header cannot be specified for PUT operations"
	// (Table service error codes); likewise for MERGE and DELETE, which
	// have no use for it. Azure refuses it before it looks at the verb.
	if res.kind == operation.PathEntity && method != http.MethodGet && headerValue(header, "If-None-Match") != "" {
		return 0, &apierr.Error{Code: apierr.InvalidInput,
			Message: "If-None-Match HTTP header cannot be specified for " + method + " operations."}
	}
	op, miss := operation.Resolve(res.kind, method, restype, comp, header)
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
