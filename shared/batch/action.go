package batch

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablebridge/tablebridge/shared/apierr"
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
	hasIfMatch := strings.TrimSpace(op.Header.Get("If-Match")) != ""
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

// EntityRef names the entity an operation targets, as the executor
// resolved it from the URL (and, for an insert, from the body).
type EntityRef struct {
	Table        string
	PartitionKey string
	RowKey       string
}

// CheckEntityGroup applies the entity-group rules of "Performing entity
// group transactions" to the resolved targets, one per operation in
// order. It returns an *OperationError for the first operation that
// breaks a rule, or nil.
//   - All operations act on one table and one PartitionKey (400
//     CommandsInBatchActOnDifferentPartitions, at the first operation
//     that differs from operation 0). Table names compare
//     case-insensitively, as Azure's do.
//   - An entity appears at most once (400 InvalidDuplicateRow, at its
//     second appearance).
//
// Azure does not document the code for a second table; a different table
// is a different entity group, so it gets the partition error too.
func (req *Request) CheckEntityGroup(refs []EntityRef) error {
	if len(refs) != len(req.Operations) {
		return errors.New("batch: CheckEntityGroup needs one EntityRef per operation")
	}
	if len(refs) == 0 {
		return nil
	}
	first := refs[0]
	seen := make(map[[2]string]bool, len(refs))
	for i, ref := range refs {
		if !strings.EqualFold(ref.Table, first.Table) || ref.PartitionKey != first.PartitionKey {
			return req.Operations[i].Fail(apierr.New(apierr.CommandsInBatchActOnDifferentPartitions))
		}
		key := [2]string{ref.PartitionKey, ref.RowKey}
		if seen[key] {
			return req.Operations[i].Fail(apierr.New(apierr.InvalidDuplicateRow))
		}
		seen[key] = true
	}
	return nil
}
