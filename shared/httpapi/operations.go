package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
)

// endpoint is how the REST layer serves an operation (shared/operation
// has its name, authorization and the rest).
type endpoint struct {
	op    operation.Operation
	json  bool // takes JSON entity payloads (a $batch body is multipart)
	serve func(h *Handler, c *call) (*response, error)
}

var (
	opQueryTables     = endpoint{operation.QueryTables, true, (*Handler).queryTables}
	opCreateTable     = endpoint{operation.CreateTable, true, (*Handler).createTable}
	opDeleteTable     = endpoint{operation.DeleteTable, true, (*Handler).deleteTable}
	opGetTable        = endpoint{operation.GetTable, true, (*Handler).getTable}
	opQueryEntities   = endpoint{operation.QueryEntities, true, (*Handler).queryEntities}
	opGetEntity       = endpoint{operation.GetEntity, true, (*Handler).getEntity}
	opInsertEntity    = endpoint{operation.InsertEntity, true, (*Handler).insertEntity}
	opUpdateEntity    = endpoint{operation.UpdateEntity, true, (*Handler).updateEntity}
	opMergeEntity     = endpoint{operation.MergeEntity, true, (*Handler).mergeEntity}
	opInsertOrReplace = endpoint{operation.InsertOrReplaceEntity, true, (*Handler).updateEntity}
	opInsertOrMerge   = endpoint{operation.InsertOrMergeEntity, true, (*Handler).mergeEntity}
	opDeleteEntity    = endpoint{operation.DeleteEntity, true, (*Handler).deleteEntity}
	opBatch           = endpoint{operation.EntityGroupTransaction, false, (*Handler).batch}
	opGetTableACL     = endpoint{operation.GetTableACL, false, (*Handler).getTableACL}
	opSetTableACL     = endpoint{operation.SetTableACL, false, (*Handler).setTableACL}
	opGetServiceProps = endpoint{operation.GetServiceProperties, false, (*Handler).getServiceProperties}
	opSetServiceProps = endpoint{operation.SetServiceProperties, false, (*Handler).setServiceProperties}
	opGetServiceStats = endpoint{operation.GetServiceStats, false, (*Handler).getServiceStats}
)

// effectiveMethod resolves verb tunnelling: legacy clients send MERGE (and
// PUT, DELETE) as POST with X-HTTP-Method ("Merge Entity").
func effectiveMethod(r *http.Request) (string, error) {
	tunnel := r.Header.Values("X-HTTP-Method")
	if len(tunnel) == 0 {
		return r.Method, nil
	}
	if len(tunnel) > 1 {
		return "", apierr.New(apierr.XMethodIncorrectCount)
	}
	if r.Method != http.MethodPost {
		return "", apierr.New(apierr.XMethodNotUsingPost)
	}
	switch m := strings.ToUpper(strings.TrimSpace(tunnel[0])); m {
	case "MERGE", "PUT", "DELETE", "PATCH":
		return m, nil
	}
	return "", apierr.New(apierr.XMethodIncorrectValue)
}

// resolveOperation maps method, resource and query to an operation.
func resolveOperation(r *http.Request, res resource, q url.Values) (endpoint, error) {
	method, err := effectiveMethod(r)
	if err != nil {
		return endpoint{}, err
	}
	comp, restype := q.Get("comp"), q.Get("restype")
	switch res.kind {
	case resService:
		if restype != "service" {
			return endpoint{}, apierr.New(apierr.InvalidURI)
		}
		switch {
		case comp == "properties" && method == http.MethodGet:
			return opGetServiceProps, nil
		case comp == "properties" && method == http.MethodPut:
			return opSetServiceProps, nil
		case comp == "stats" && method == http.MethodGet:
			return opGetServiceStats, nil
		case comp != "properties" && comp != "stats":
			return endpoint{}, apierr.Newf(apierr.InvalidQueryParameterValue, "comp=%s", comp)
		}
	case resTables:
		switch method {
		case http.MethodGet:
			return opQueryTables, nil
		case http.MethodPost:
			return opCreateTable, nil
		}
	case resTable:
		switch method {
		case http.MethodDelete:
			return opDeleteTable, nil
		case http.MethodGet:
			return opGetTable, nil
		}
	case resBatch:
		if method == http.MethodPost {
			return opBatch, nil
		}
	case resEntities:
		if comp == "acl" {
			switch method {
			case http.MethodGet, http.MethodHead:
				return opGetTableACL, nil
			case http.MethodPut:
				return opSetTableACL, nil
			}
			break
		}
		switch method {
		case http.MethodGet:
			return opQueryEntities, nil
		case http.MethodPost:
			if len(r.Header.Values("X-HTTP-Method")) > 0 {
				return endpoint{}, apierr.New(apierr.XMethodIncorrectValue)
			}
			return opInsertEntity, nil
		}
	case resEntity:
		// "If-None-Match HTTP header cannot be specified for PUT
		// operations" (Table service error codes); likewise for MERGE and
		// DELETE, which have no use for it.
		if method != http.MethodGet && r.Header.Get("If-None-Match") != "" {
			return endpoint{}, &apierr.Error{Code: apierr.InvalidInput,
				Message: "If-None-Match HTTP header cannot be specified for " + method + " operations."}
		}
		ifMatch := r.Header.Get("If-Match") != ""
		switch method {
		case http.MethodGet:
			return opGetEntity, nil
		case http.MethodPut:
			if ifMatch {
				return opUpdateEntity, nil
			}
			return opInsertOrReplace, nil
		case http.MethodPatch, "MERGE":
			if ifMatch {
				return opMergeEntity, nil
			}
			return opInsertOrMerge, nil
		case http.MethodDelete:
			return opDeleteEntity, nil
		}
	}
	return endpoint{}, apierr.Newf(apierr.UnsupportedHTTPVerb, "The resource doesn't support %s.", method)
}
