package linearize

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Kind is what an operation of a history asks the service.
type Kind string

// The operations a history records.
const (
	Insert          Kind = "insert"          // Insert Entity: 409 if it exists
	Get             Kind = "get"             // Query Entities of one key: 404 if absent
	Replace         Kind = "replace"         // Update Entity with If-Match (an ETag or *)
	Merge           Kind = "merge"           // Merge Entity with If-Match (an ETag or *)
	InsertOrReplace Kind = "insertOrReplace" // Update Entity without If-Match
	InsertOrMerge   Kind = "insertOrMerge"   // Merge Entity without If-Match
	Delete          Kind = "delete"          // Delete Entity with If-Match (an ETag or *)
	Batch           Kind = "batch"           // an entity group transaction of Actions
	Query           Kind = "query"           // Query Entities of a whole partition
)

func (k Kind) writes() bool { return k != Get && k != Query }

// Outcome is what the answer to an operation says happened.
type Outcome string

// The outcomes an answer can have. A batch that failed carries its failing
// action's outcome (NotFound, Conflict or ConditionFailed) and its index.
const (
	OK              Outcome = "ok"
	NotFound        Outcome = "notFound"        // 404 ResourceNotFound
	Conflict        Outcome = "conflict"        // 409 EntityAlreadyExists
	ConditionFailed Outcome = "conditionFailed" // 412 UpdateConditionNotSatisfied
	// Indeterminate: the write may or may not have been applied, now or
	// later: 500 (OperationTimedOut, InternalError), any other 5xx but
	// 503, a timeout or a connection broken after the request went out.
	Indeterminate Outcome = "indeterminate"
	// NotPerformed: 503 ServerBusy, or a connection refused before the
	// request went out. Azure clients read it as "not performed, retry",
	// and the model holds the service to it.
	NotPerformed Outcome = "notPerformed"
	// Unexpected: an answer the workload never provokes (400, 403, 404
	// TableNotFound, ...). The model treats it as NotPerformed and the
	// check reports it.
	Unexpected Outcome = "unexpected"
)

// definite reports whether the answer says what the service did.
func (o Outcome) definite() bool {
	return o == OK || o == NotFound || o == Conflict || o == ConditionFailed
}

// Props are the properties of one version of an entity. W is the id of the
// write that made the version, unique within a history, so a read names
// the version it saw; A, B and C are each absent ("") or the id of the write
// that last set them, so a read also shows what a merge kept.
type Props struct {
	W string `json:"W,omitempty"`
	A string `json:"A,omitempty"`
	B string `json:"B,omitempty"`
	C string `json:"C,omitempty"`
	// Large is the id of the write whose large payload the version
	// carries, "" for none: largeProps properties of largeChars
	// characters each, written and merged together, more than one
	// DynamoDB item holds.
	Large string `json:"large,omitempty"`
	// Extra names a property outside these that a read returned, or a
	// large payload that is not one write's whole: nothing the workload
	// wrote explains it.
	Extra string `json:"extra,omitempty"`
}

// The large payload: 14 String properties of 30,000 characters (Azure's
// limit is 64 KiB of UTF-16), 420 KB together, past DynamoDB's 400 KB item
// and within Azure's 1 MiB entity.
const (
	largeProps = 14
	largeChars = 30000
)

func (p Props) String() string {
	var b strings.Builder
	b.WriteString("{" + p.W)
	for _, kv := range [...][2]string{{"A", p.A}, {"B", p.B}, {"C", p.C}, {"L", p.Large}, {"extra:", p.Extra}} {
		if kv[1] != "" {
			b.WriteString(" " + kv[0] + "=" + kv[1])
		}
	}
	return b.String() + "}"
}

// merged is p merged over old: the properties p names win, the others stay.
func (p Props) merged(old Props) Props {
	out := old
	out.W = p.W
	if p.A != "" {
		out.A = p.A
	}
	if p.B != "" {
		out.B = p.B
	}
	if p.C != "" {
		out.C = p.C
	}
	if p.Large != "" {
		out.Large = p.Large
	}
	return out
}

// Action is one operation of an entity group transaction.
type Action struct {
	Kind    Kind   `json:"kind"`
	RowKey  string `json:"rowKey"`
	IfMatch string `json:"ifMatch,omitempty"`
	Props   Props  `json:"props"`
}

// Entity is one entity a query returned.
type Entity struct {
	RowKey string `json:"rowKey"`
	ETag   string `json:"etag"`
	Props  Props  `json:"props"`
}

// Op is one recorded operation: what a client asked, when, and what came
// back. Times are nanoseconds since the history began, taken just before
// the request was sent and just after its answer was read.
type Op struct {
	// ID is the client and its operation's number ("c3.17"); a write
	// writes it as W (an action of a batch as "c3.17.2").
	ID     string `json:"id"`
	Client int    `json:"client"`
	Call   int64  `json:"call"`
	Return int64  `json:"return"`

	Kind         Kind   `json:"kind"`
	PartitionKey string `json:"partitionKey"`
	// RowKey, IfMatch ("" for none, "*" or an ETag) and Props are a
	// single-entity operation's; a batch has Actions.
	RowKey  string   `json:"rowKey,omitempty"`
	IfMatch string   `json:"ifMatch,omitempty"`
	Props   Props    `json:"props,omitzero"`
	Actions []Action `json:"actions,omitempty"`
	// Top is a query's $top, 0 for none: a page of at most Top entities,
	// and a continuation to the next.
	Top int `json:"top,omitempty"`

	Outcome Outcome `json:"outcome"`
	// Status and Code are the HTTP answer's (the failing part's for a
	// batch); Error is a transport error.
	Status int    `json:"status,omitempty"`
	Code   string `json:"code,omitempty"`
	Error  string `json:"error,omitempty"`
	// ETag answers a write or a Get; Read is what a Get read.
	ETag string `json:"etag,omitempty"`
	Read *Props `json:"read,omitempty"`
	// Failed is the index of a failed batch's failing action; ETags are a
	// successful batch's, one per action ("" for a delete).
	Failed int      `json:"failed,omitempty"`
	ETags  []string `json:"etags,omitempty"`
	// Entities are what a query returned, over Pages pages.
	Entities []Entity `json:"entities,omitempty"`
	Pages    int      `json:"pages,omitempty"`
}

func (op *Op) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", op.ID, op.Kind, op.PartitionKey)
	switch op.Kind {
	case Batch:
		for i, a := range op.Actions {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s %s%s %v", a.Kind, a.RowKey, ifMatchString(a.IfMatch), a.Props)
		}
	case Query:
	case Get:
		b.WriteString("/" + op.RowKey)
	default:
		fmt.Fprintf(&b, "/%s%s %v", op.RowKey, ifMatchString(op.IfMatch), op.Props)
	}
	fmt.Fprintf(&b, " -> %s", op.Outcome)
	if op.Status != 0 {
		fmt.Fprintf(&b, " %d %s", op.Status, op.Code)
	}
	if op.Error != "" {
		fmt.Fprintf(&b, " (%s)", op.Error)
	}
	switch {
	case op.Kind == Batch && op.Outcome.definite() && op.Outcome != OK:
		fmt.Fprintf(&b, " at action %d", op.Failed)
	case op.Read != nil:
		fmt.Fprintf(&b, " %v", *op.Read)
	case op.Kind == Query && op.Outcome == OK:
		for _, e := range op.Entities {
			fmt.Fprintf(&b, " %s%v", e.RowKey, e.Props)
		}
	}
	return b.String()
}

func ifMatchString(m string) string {
	if m == "" {
		return ""
	}
	return " if-match " + m
}

// History is everything a run recorded: what the clients did, over which
// keys, and the seed that chose it.
type History struct {
	// Name is the configuration's ("memory", "bolt-kill", ...).
	Name    string `json:"name"`
	Seed    uint64 `json:"seed"`
	Clients int    `json:"clients"`
	// PartitionKeys and RowKeys are the keys the workload used: every
	// entity of the table is one of their combinations.
	PartitionKeys []string `json:"partitionKeys"`
	RowKeys       []string `json:"rowKeys"`
	// SnapshotQueries holds a partition query of one page to one instant:
	// it must return the partition as it was at one point of its
	// interval, not only, for each entity, a version of its interval (see
	// doc.go). A query of several pages is several reads, as on Azure.
	SnapshotQueries bool `json:"snapshotQueries,omitempty"`
	// Barriers are instants by which every write sent before has landed
	// or never will: the server that received it was killed.
	Barriers []int64 `json:"barriers,omitempty"`
	Ops      []Op    `json:"ops"`
}

// Save writes the history as indented JSON, a file Load reads back (a
// failing history kept under testdata as a regression test).
func (h *History) Save(path string) error {
	b, err := json.MarshalIndent(h, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// Load reads a history Save wrote.
func Load(path string) (*History, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var h History
	if err := json.Unmarshal(b, &h); err != nil {
		return nil, fmt.Errorf("linearize: %s: %w", path, err)
	}
	return &h, nil
}
