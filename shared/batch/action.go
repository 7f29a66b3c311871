package batch

import (
	"net/http"
	"strconv"
	"strings"
)

// Action is the Table operation an embedded request performs, as its verb
// and If-Match select it (the single-entity operations of the REST
// reference).
type Action int

// The actions a batch can carry.
const (
	// ActionInsert is Insert Entity (POST).
	ActionInsert Action = iota + 1
	// ActionUpdate is Update Entity: PUT with If-Match.
	ActionUpdate
	// ActionInsertOrReplace is Insert Or Replace Entity: PUT without If-Match.
	ActionInsertOrReplace
	// ActionMerge is Merge Entity: PATCH or MERGE with If-Match.
	ActionMerge
	// ActionInsertOrMerge is Insert Or Merge Entity: PATCH or MERGE without
	// If-Match.
	ActionInsertOrMerge
	// ActionDelete is Delete Entity.
	ActionDelete
	// ActionRetrieve is a GET: a point read or a query, alone in its batch.
	ActionRetrieve
)

var actionNames = map[Action]string{
	ActionInsert:          "Insert",
	ActionUpdate:          "Update",
	ActionInsertOrReplace: "InsertOrReplace",
	ActionMerge:           "Merge",
	ActionInsertOrMerge:   "InsertOrMerge",
	ActionDelete:          "Delete",
	ActionRetrieve:        "Retrieve",
}

func (a Action) String() string {
	if name, ok := actionNames[a]; ok {
		return name
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// Action classifies the operation. Parse only admits the verbs listed
// here, so every parsed operation has an action.
func (op *Operation) Action() Action {
	// Header keys are canonical (Parse writes them so), and indexing
	// spares Get's canonicalization of "If-Match" for every operation.
	var ifMatch string
	if v := op.Header["If-Match"]; len(v) > 0 {
		ifMatch = v[0]
	}
	hasIfMatch := strings.TrimSpace(ifMatch) != ""
	switch op.Method {
	case http.MethodPost:
		return ActionInsert
	case http.MethodPut:
		if hasIfMatch {
			return ActionUpdate
		}
		return ActionInsertOrReplace
	case http.MethodPatch, "MERGE":
		if hasIfMatch {
			return ActionMerge
		}
		return ActionInsertOrMerge
	case http.MethodDelete:
		return ActionDelete
	case http.MethodGet:
		return ActionRetrieve
	}
	return 0
}
