package linearize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
)

// recorder sends the operations of one client through the official Go SDK
// and records each one's call and return times and its answer. The SDK's
// retries must be off (protocoltest.NewServiceClient, or the ClientOptions of
// tablebridgetest): each recorded operation is one HTTP exchange, and
// its answer is what that exchange said.
type recorder struct {
	table   *aztables.Client
	start   time.Time
	timeout time.Duration
}

func (r *recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

// do sends op (its request fields filled in), waits for the answer and
// records it in op.
func (r *recorder) do(ctx context.Context, op *Op) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	op.Call = r.now()
	defer func() { op.Return = r.now() }()
	var err error
	switch op.Kind {
	case Insert:
		var resp aztables.AddEntityResponse
		if resp, err = r.table.AddEntity(ctx, entityJSON(op.PartitionKey, op.RowKey, op.Props), nil); err == nil {
			op.ETag = string(resp.ETag)
		}
	case Get:
		var resp aztables.GetEntityResponse
		if resp, err = r.table.GetEntity(ctx, op.PartitionKey, op.RowKey, nil); err == nil {
			op.ETag = string(resp.ETag)
			var e Entity
			if e, err = parseEntity(resp.Value); err == nil {
				op.Read = &e.Props
			}
		}
	case Replace, Merge:
		mode := aztables.UpdateModeReplace
		if op.Kind == Merge {
			mode = aztables.UpdateModeMerge
		}
		etag := azcore.ETag(op.IfMatch)
		var resp aztables.UpdateEntityResponse
		if resp, err = r.table.UpdateEntity(ctx, entityJSON(op.PartitionKey, op.RowKey, op.Props), &aztables.UpdateEntityOptions{IfMatch: &etag, UpdateMode: mode}); err == nil {
			op.ETag = string(resp.ETag)
		}
	case InsertOrReplace, InsertOrMerge:
		mode := aztables.UpdateModeReplace
		if op.Kind == InsertOrMerge {
			mode = aztables.UpdateModeMerge
		}
		var resp aztables.UpsertEntityResponse
		if resp, err = r.table.UpsertEntity(ctx, entityJSON(op.PartitionKey, op.RowKey, op.Props), &aztables.UpsertEntityOptions{UpdateMode: mode}); err == nil {
			op.ETag = string(resp.ETag)
		}
	case Delete:
		etag := azcore.ETag(op.IfMatch)
		_, err = r.table.DeleteEntity(ctx, op.PartitionKey, op.RowKey, &aztables.DeleteEntityOptions{IfMatch: &etag})
	case Batch:
		r.batch(ctx, op)
		return
	case Query:
		err = r.query(ctx, op)
	}
	record(op, err)
}

// record sets op's outcome from err, the SDK's answer.
func record(op *Op, err error) {
	var re *azcore.ResponseError
	switch {
	case err == nil:
		op.Outcome = OK
	case errors.As(err, &re):
		op.Status, op.Code = re.StatusCode, re.ErrorCode
		op.Outcome = outcomeOf(re.StatusCode, re.ErrorCode)
	case errors.As(err, new(unreadable)):
		op.Outcome, op.Error = Unexpected, firstLine(err)
	case errors.Is(err, syscall.ECONNREFUSED):
		// Nothing was sent: the server was not listening.
		op.Outcome, op.Error = NotPerformed, firstLine(err)
	default:
		// A timeout, or a connection broken after the request went out.
		op.Outcome, op.Error = Indeterminate, firstLine(err)
	}
}

// outcomeOf reads an answer's status and error code as Azure defines them
// (SECURITY.md, "What a failed write means"): 503 is not performed, any
// other 5xx leaves the outcome open.
func outcomeOf(status int, code string) Outcome {
	switch {
	case status == http.StatusNotFound && code == "ResourceNotFound":
		return NotFound
	case status == http.StatusConflict && code == "EntityAlreadyExists":
		return Conflict
	case status == http.StatusPreconditionFailed && code == "UpdateConditionNotSatisfied":
		return ConditionFailed
	case status == http.StatusServiceUnavailable:
		return NotPerformed
	case status >= 500:
		return Indeterminate
	}
	return Unexpected
}

// batch sends op's actions as one entity group transaction and reads the
// whole answer, which the SDK does not return: the ETag of each action,
// or the failing action's index and error.
func (r *recorder) batch(ctx context.Context, op *Op) {
	actions := make([]aztables.TransactionAction, len(op.Actions))
	for i, a := range op.Actions {
		ta := aztables.TransactionAction{Entity: entityJSON(op.PartitionKey, a.RowKey, a.Props)}
		if a.IfMatch != "" {
			etag := azcore.ETag(a.IfMatch)
			ta.IfMatch = &etag
		}
		switch a.Kind {
		case Insert:
			ta.ActionType = aztables.TransactionTypeAdd
		case Replace:
			ta.ActionType = aztables.TransactionTypeUpdateReplace
		case Merge:
			ta.ActionType = aztables.TransactionTypeUpdateMerge
		case InsertOrReplace:
			ta.ActionType = aztables.TransactionTypeInsertReplace
		case InsertOrMerge:
			ta.ActionType = aztables.TransactionTypeInsertMerge
		case Delete:
			ta.ActionType = aztables.TransactionTypeDelete
		}
		actions[i] = ta
	}
	var raw *http.Response
	_, err := r.table.SubmitTransaction(policy.WithCaptureResponse(ctx, &raw), actions, nil)
	var re *azcore.ResponseError
	// aztables answers a failed changeset (202) with a ResponseError of
	// status 202 and no code; the parts say which action failed.
	if err != nil && !(errors.As(err, &re) && re.StatusCode == http.StatusAccepted) || raw == nil {
		record(op, err)
		return
	}
	body, perr := runtime.Payload(raw)
	var parts []protocoltest.BatchPart
	if perr == nil {
		parts, perr = protocoltest.ReadBatchParts(raw.Header.Get("Content-Type"), body)
	}
	switch {
	case perr != nil:
		op.Outcome, op.Status, op.Error = Unexpected, raw.StatusCode, "unreadable batch answer: "+perr.Error()
	case err == nil && len(parts) == len(op.Actions):
		op.Outcome = OK
		for _, p := range parts {
			op.ETags = append(op.ETags, p.Header.Get("ETag"))
		}
	case err != nil && len(parts) == 1:
		failed, ferr := parts[0].Failure()
		op.Status, op.Code, op.Failed = parts[0].StatusCode, failed.Code, failed.Index
		op.Outcome = outcomeOf(parts[0].StatusCode, failed.Code)
		if ferr != nil && op.Outcome != Indeterminate && op.Outcome != NotPerformed {
			op.Outcome, op.Error = Unexpected, ferr.Error()
		}
	default:
		op.Outcome, op.Status, op.Error = Unexpected, raw.StatusCode, fmt.Sprintf("batch answer of %d parts for %d actions", len(parts), len(op.Actions))
	}
}

// query reads the whole partition, following continuations (one HTTP
// exchange per page).
func (r *recorder) query(ctx context.Context, op *Op) error {
	filter := "PartitionKey eq '" + strings.ReplaceAll(op.PartitionKey, "'", "''") + "'"
	opts := &aztables.ListEntitiesOptions{Filter: &filter}
	if op.Top > 0 {
		top := int32(op.Top)
		opts.Top = &top
	}
	pager := r.table.NewListEntitiesPager(opts)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return err
		}
		op.Pages++
		for _, b := range page.Entities {
			e, err := parseEntity(b)
			if err != nil {
				return err
			}
			op.Entities = append(op.Entities, e)
		}
	}
	return nil
}

// entityJSON is the body of a write: the keys and the properties set.
func entityJSON(pk, rk string, p Props) []byte {
	m := map[string]string{"PartitionKey": pk, "RowKey": rk}
	for name, v := range map[string]string{"W": p.W, "A": p.A, "B": p.B, "C": p.C} {
		if v != "" {
			m[name] = v
		}
	}
	if p.Large != "" {
		for i := range largeProps {
			m[largeName(i)] = largeValue(p.Large)
		}
	}
	b, _ := json.Marshal(m)
	return b
}

func largeName(i int) string { return "L" + strconv.Itoa(i) }

// largeValue is one property of the large payload of write id: its id,
// then padding up to largeChars.
func largeValue(id string) string {
	return id + "|" + strings.Repeat("x", largeChars-len(id)-1)
}

// readLarge reads the large payload of an entity (m), which must be whole
// and one write's: it returns that write's id ("" for none), or an error
// naming what is wrong.
func readLarge(m map[string]any) (string, error) {
	var id string
	for i := range largeProps {
		v, ok := m[largeName(i)].(string)
		if i == 0 && !ok {
			break
		}
		this, _, _ := strings.Cut(v, "|")
		switch {
		case !ok:
			return "", fmt.Errorf("large payload without %s", largeName(i))
		case i == 0:
			id = this
		case this != id:
			return "", fmt.Errorf("large payload of %s and %s", id, this)
		}
		if v != largeValue(id) {
			return "", fmt.Errorf("%s of %d characters, not %s's", largeName(i), len(v), id)
		}
	}
	for name := range m {
		if n, err := strconv.Atoi(strings.TrimPrefix(name, "L")); strings.HasPrefix(name, "L") && err == nil && (id == "" || n >= largeProps) {
			return "", fmt.Errorf("stray %s", name)
		}
	}
	return id, nil
}

// unreadable is an answer that is not what the protocol says it is.
type unreadable struct{ error }

// parseEntity reads an entity of an answer: its RowKey, its ETag (from
// odata.etag, which queries carry) and its properties. A property other
// than W, A, B, C and the large payload's, one of those that is not a
// string, or a large payload that is not one write's whole, is Extra.
func parseEntity(b []byte) (Entity, error) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return Entity{}, unreadable{fmt.Errorf("entity %.200s: %w", b, err)}
	}
	var e Entity
	e.RowKey, _ = m["RowKey"].(string)
	e.ETag, _ = m["odata.etag"].(string)
	large, err := readLarge(m)
	if err != nil {
		e.Props.Extra = err.Error()
	}
	e.Props.Large = large
	names := make([]string, 0, len(m))
	for name := range m {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if name == "PartitionKey" || name == "RowKey" || name == "Timestamp" || strings.HasPrefix(name, "odata.") || strings.Contains(name, "@odata.") {
			continue
		}
		if _, err := strconv.Atoi(strings.TrimPrefix(name, "L")); strings.HasPrefix(name, "L") && err == nil {
			continue
		}
		v, ok := m[name].(string)
		switch {
		case ok && name == "W":
			e.Props.W = v
		case ok && name == "A":
			e.Props.A = v
		case ok && name == "B":
			e.Props.B = v
		case ok && name == "C":
			e.Props.C = v
		case e.Props.Extra == "":
			e.Props.Extra = fmt.Sprintf("%s=%v", name, m[name])
		}
	}
	return e, nil
}

func firstLine(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
