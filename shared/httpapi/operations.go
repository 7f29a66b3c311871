package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
)

// operation is one REST operation: its name for logs, what it needs
// authorized, and how it is served.
type operation struct {
	name string
	// auth is what the principal must be allowed; 0 for $batch, whose
	// operations are authorized one by one.
	auth  auth.Operation
	json  bool // takes JSON entity payloads (a $batch body is multipart)
	serve func(h *Handler, c *call) (*response, error)
}

var (
	opQueryTables     = operation{"QueryTables", auth.QueryTables, true, (*Handler).queryTables}
	opCreateTable     = operation{"CreateTable", auth.CreateTable, true, (*Handler).createTable}
	opDeleteTable     = operation{"DeleteTable", auth.DeleteTable, true, (*Handler).deleteTable}
	opGetTable        = operation{"GetTable", auth.QueryTables, true, (*Handler).getTable}
	opQueryEntities   = operation{"QueryEntities", auth.QueryEntities, true, (*Handler).queryEntities}
	opGetEntity       = operation{"GetEntity", auth.GetEntity, true, (*Handler).getEntity}
	opInsertEntity    = operation{"InsertEntity", auth.InsertEntity, true, (*Handler).insertEntity}
	opUpdateEntity    = operation{"UpdateEntity", auth.UpdateEntity, true, (*Handler).updateEntity}
	opMergeEntity     = operation{"MergeEntity", auth.MergeEntity, true, (*Handler).mergeEntity}
	opInsertOrReplace = operation{"InsertOrReplaceEntity", auth.InsertOrReplaceEntity, true, (*Handler).updateEntity}
	opInsertOrMerge   = operation{"InsertOrMergeEntity", auth.InsertOrMergeEntity, true, (*Handler).mergeEntity}
	opDeleteEntity    = operation{"DeleteEntity", auth.DeleteEntity, true, (*Handler).deleteEntity}
	opBatch           = operation{"EntityGroupTransaction", 0, false, (*Handler).batch}
	opGetTableACL     = operation{"GetTableACL", auth.GetTableACL, false, (*Handler).getTableACL}
	opSetTableACL     = operation{"SetTableACL", auth.SetTableACL, false, (*Handler).setTableACL}
	opGetServiceProps = operation{"GetServiceProperties", auth.GetServiceProperties, false, (*Handler).getServiceProperties}
	opSetServiceProps = operation{"SetServiceProperties", auth.SetServiceProperties, false, (*Handler).setServiceProperties}
	opGetServiceStats = operation{"GetServiceStats", auth.GetServiceStats, false, (*Handler).getServiceStats}
)

// readsOnly reports whether the operation leaves the account unchanged, so
// the account's secondary location, a read-only replica, serves it. A
// $batch (auth 0) writes.
func (op operation) readsOnly() bool {
	switch op.auth {
	case auth.QueryTables, auth.QueryEntities, auth.GetEntity, auth.GetTableACL,
		auth.GetServiceProperties, auth.GetServiceStats:
		return true
	}
	return false
}

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
func resolveOperation(r *http.Request, res resource, q url.Values) (operation, error) {
	method, err := effectiveMethod(r)
	if err != nil {
		return operation{}, err
	}
	comp, restype := q.Get("comp"), q.Get("restype")
	switch res.kind {
	case resService:
		if restype != "service" {
			return operation{}, apierr.New(apierr.InvalidURI)
		}
		switch {
		case comp == "properties" && method == http.MethodGet:
			return opGetServiceProps, nil
		case comp == "properties" && method == http.MethodPut:
			return opSetServiceProps, nil
		case comp == "stats" && method == http.MethodGet:
			return opGetServiceStats, nil
		case comp != "properties" && comp != "stats":
			return operation{}, apierr.Newf(apierr.InvalidQueryParameterValue, "comp=%s", comp)
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
				return operation{}, apierr.New(apierr.XMethodIncorrectValue)
			}
			return opInsertEntity, nil
		}
	case resEntity:
		// "If-None-Match HTTP header cannot be specified for PUT
		// operations" (Table service error codes); likewise for MERGE and
		// DELETE, which have no use for it.
		if method != http.MethodGet && r.Header.Get("If-None-Match") != "" {
			return operation{}, &apierr.Error{Code: apierr.InvalidInput,
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
	return operation{}, apierr.Newf(apierr.UnsupportedHTTPVerb, "The resource doesn't support %s.", method)
}
