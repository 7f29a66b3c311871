package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Writes cost exactly one DynamoDB request when the entity is (and was) one
// item, and never read before they write:
//
//	insert             PutItem     attribute_not_exists(PartitionKey)
//	replace            PutItem     [If-Match] AND attribute_not_exists($chunks)
//	merge              UpdateItem  [If-Match] AND attribute_not_exists($chunks)
//	                               AND (attribute_not_exists($n) OR $n <= 252 - n)
//	delete             DeleteItem  (exists | If-Match) AND attribute_not_exists($chunks)
//	several ops        one TransactWriteItems with the same conditions
//
// If-Match is attribute_exists(PartitionKey) for "*" and Timestamp = :etag for
// an ETag. ReturnValuesOnConditionCheckFailure=ALL_OLD hands back the stored
// item of a failed condition, which tells "missing" (ErrEntityNotFound) from
// "another version" (ErrConditionFailed) without a read.
//
// The conditions on $chunks and $n keep the fast path exact: when the
// stored entity is chunked, or a merge could push it past 252 properties, or
// a merged item outgrows 400 KB, the write fails without effect and is
// redone knowing the stored version (from ALL_OLD, plus a TransactGetItems
// of its overflow items for a merge): the ops become a TransactWriteItems
// that rewrites the entity whole, deletes overflow items it no longer needs,
// and is conditioned on that exact version ($gen, or Timestamp), so a
// concurrent writer makes it retry rather than lose an update. These slower
// paths cost 2-3 requests and only happen for large entities and merges
// near the property limit.

// maxWriteAttempts bounds the retries of a write whose stored version keeps
// changing under it; then it fails with ErrBusy.
const maxWriteAttempts = 8

// plan is one op of a Write and what a failed attempt taught about the
// stored entity.
type plan struct {
	index int
	op    store.Op
	pk    string // stored keys
	rk    string
	items entityItems // insert, replace: the new entity; merge: once known
	// merge: the sent properties, sorted by name, as the attribute each
	// is stored under, its value, and the attribute it must not also have
	// (its name with or without typedSuffix)
	mergeAttrs   []string
	mergeValues  []types.AttributeValue
	mergeRemoves []string
	patchSize    int // the estimated item size of the sent properties
	// known is the stored version, set after a failed attempt revealed it;
	// the next attempt is conditioned on exactly that version.
	known *storedVersion
	// assigned is the Timestamp the service gave the op, which
	// raiseTimestamps raises from on every attempt.
	assigned time.Time
	// refused: the op's own condition failed against the stored entity a
	// read before the first attempt saw. An op before it may fail too,
	// and a failed batch names its first failing op, so the attempt is
	// sent with this op as a check that cannot pass: nothing applies, and
	// the cancellation reasons say, at one instant, which ops fail. If
	// this one no longer does, the next attempt writes it.
	refused bool
}

// refusal reports whether err is an op's own failure (its condition, or
// the limits of its result) rather than the store's.
func refusal(err error) bool {
	for _, e := range []error{store.ErrEntityNotFound, store.ErrConditionFailed, store.ErrEntityExists, store.ErrEntityTooLarge, store.ErrTooManyProperties} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

type storedVersion struct {
	exists bool
	meta   itemMeta
	entity *model.Entity // merges only: the stored entity in full
}

// Write applies ops atomically.
func (s *Store) Write(ctx context.Context, account, table string, ops []store.Op) error {
	if len(ops) == 0 {
		return nil
	}
	return s.onTable(ctx, account, table, true, func(loc location) error { return s.write(ctx, loc, ops) })
}

func (s *Store) write(ctx context.Context, loc location, ops []store.Op) (err error) {
	plans := make([]*plan, len(ops))
	for i, op := range ops {
		p, err := newPlan(&loc, i, op)
		if err != nil {
			return &store.OpError{Index: i, Err: err}
		}
		if p.patchSize > itemBudget {
			// The sent properties alone outgrow one item: an UpdateItem
			// cannot work, so merge from the stored entity right away.
			if err := s.resolve(ctx, &loc, p, failure{op: i, tooLarge: true}); err != nil {
				if i == 0 || !refusal(err) {
					return &store.OpError{Index: i, Err: err}
				}
				// An op before it may fail too, and Azure names the
				// first: let the attempt find out (plan.refused).
				p.refused = true
			}
		}
		plans[i] = p
	}
	contended := false
	for attempt := 0; attempt < maxWriteAttempts; attempt++ {
		if contended {
			// Another writer changed an entity (or held it in a
			// transaction) between our attempts: give it room.
			if err := backoff(ctx, attempt); err != nil {
				return mapErr("write", err)
			}
		}
		if i, err := raiseTimestamps(&loc, plans); err != nil {
			return &store.OpError{Index: i, Err: err}
		}
		actions, owners := buildActions(&loc, plans)
		var fails []failure
		if len(actions) == 1 {
			fails, err = s.writeOne(ctx, actions[0], owners[0])
		} else {
			if err := checkTransaction(actions, owners, plans); err != nil {
				return err
			}
			fails, err = s.writeTransaction(ctx, actions, owners)
		}
		if err != nil {
			return err
		}
		if len(fails) == 0 {
			return nil
		}
		sort.Slice(fails, func(i, j int) bool { return fails[i].op < fails[j].op })
		contended = false
		for _, f := range fails {
			if f.conflict || plans[f.op].known != nil {
				// Held by another transaction, or the version we pinned
				// changed: contention, not a first look at the layout.
				contended = true
			}
			if f.conflict {
				continue
			}
			if err := s.resolve(ctx, &loc, plans[f.op], f); err != nil {
				return &store.OpError{Index: f.op, Err: err}
			}
			plans[f.op].refused = false
		}
	}
	return fmt.Errorf("dynamostore: write: the entities kept changing under %d attempts: %w", maxWriteAttempts, store.ErrBusy)
}

// TransactWriteItems' limits: 100 actions, and 4 MB for all items together.
// Azure's batches hold 100 operations and 4 MiB of request body, so only a
// batch with entities larger than one item, whose overflow items add
// actions, can pass them; it fails with ErrEntityTooLarge naming the op
// that crossed the limit rather than with DynamoDB's ValidationException.
const (
	maxTransactItems = 100
	maxTransactBytes = 4 << 20
)

func checkTransaction(actions []types.TransactWriteItem, owners []int, plans []*plan) error {
	if len(actions) > maxTransactItems {
		return &store.OpError{Index: owners[maxTransactItems], Err: fmt.Errorf(
			"dynamostore: the ops need %d DynamoDB writes, more than one transaction's %d: %w", len(actions), maxTransactItems, store.ErrEntityTooLarge)}
	}
	total := 0
	for i, a := range actions {
		switch {
		case a.Put != nil:
			total += itemSize(a.Put.Item)
		case a.Update != nil:
			total += plans[owners[i]].patchSize
		}
		if total > maxTransactBytes {
			return &store.OpError{Index: owners[i], Err: fmt.Errorf(
				"dynamostore: the ops write more than the %d bytes one DynamoDB transaction holds: %w", maxTransactBytes, store.ErrEntityTooLarge)}
		}
	}
	return nil
}

func backoff(ctx context.Context, attempt int) error {
	d := time.Duration(5<<min(attempt, 5)) * time.Millisecond
	return sleep(ctx, d/2+time.Duration(rand.Int64N(int64(d))))
}

// sleep waits d, or until ctx ends (its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func newPlan(loc *location, i int, op store.Op) (*plan, error) {
	if err := op.Check(); err != nil {
		return nil, err
	}
	e := op.Entity
	if err := checkKey(e.PartitionKey, loc.maxPKBytes()); err != nil {
		return nil, err
	}
	if err := checkKey(e.RowKey, maxRangeKeyBytes); err != nil {
		return nil, err
	}
	p := &plan{index: i, op: op, pk: loc.pk(e.PartitionKey), rk: encodeKey(e.RowKey), assigned: e.Timestamp}
	switch op.Kind {
	case store.OpInsert, store.OpReplace:
		items, err := buildItems(loc, e)
		if err != nil {
			return nil, err
		}
		p.items = items
	case store.OpMerge:
		if len(e.Properties) > maxCustomProperties {
			return nil, fmt.Errorf("dynamostore: merge of %d properties: %w", len(e.Properties), store.ErrTooManyProperties)
		}
		names := make([]string, 0, len(e.Properties))
		for name := range e.Properties {
			if isSystemAttr(name) {
				return nil, fmt.Errorf("dynamostore: property name %q is reserved", name)
			}
			names = append(names, name)
		}
		sort.Strings(names)
		p.mergeAttrs = make([]string, len(names))
		p.mergeValues = make([]types.AttributeValue, len(names))
		p.mergeRemoves = make([]string, len(names))
		for i, name := range names {
			av, typed, err := encodeValue(e.Properties[name])
			if err != nil {
				return nil, err
			}
			p.mergeAttrs[i] = propertyAttr(name, typed)
			p.mergeValues[i] = av
			p.mergeRemoves[i] = propertyAttr(name, !typed)
			p.patchSize += len(p.mergeAttrs[i]) + valueSize(av)
		}
	}
	return p, nil
}

// needsExisting reports whether the op fails when the entity is missing.
func needsExisting(op store.Op) bool {
	return op.Kind == store.OpDelete || op.Cond != store.CondNone
}

// expr collects the placeholders of one action's expressions.
type expr struct {
	names  map[string]string
	values map[string]types.AttributeValue
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

func (x *expr) name(ph, attr string) string { x.names[ph] = attr; return ph }

func (x *expr) value(ph string, av types.AttributeValue) string { x.values[ph] = av; return ph }

func (x *expr) namesOrNil() map[string]string {
	if len(x.names) == 0 {
		return nil
	}
	return x.names
}

func (x *expr) valuesOrNil() map[string]types.AttributeValue {
	if len(x.values) == 0 {
		return nil
	}
	return x.values
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// ifMatch is the op's own precondition, or "" for none.
func ifMatch(x *expr, op store.Op) string {
	switch {
	case op.Kind == store.OpInsert:
		return "attribute_not_exists(" + x.name("#pk", attrPartitionKey) + ")"
	case op.Cond == store.CondTimestamp:
		return x.name("#ts", attrTimestamp) + " = " + x.value(":ifts", str(formatTime(op.Timestamp)))
	case op.Cond == store.CondExists || op.Kind == store.OpDelete:
		return "attribute_exists(" + x.name("#pk", attrPartitionKey) + ")"
	}
	return ""
}

// newerThanStored is the condition that keeps an entity's Timestamp
// strictly increasing across processes (see doc.go, "Timestamps"): the
// stored version, if any, must be older than the one written. An If-Match
// write needs none, since raiseTimestamps already put its Timestamp above
// the one it matches. ph and vph are the placeholders of the Timestamp
// attribute and the new Timestamp (a merge's SET already names both).
func newerThanStored(x *expr, op store.Op, ph, vph string) string {
	if op.Cond == store.CondTimestamp {
		return ""
	}
	ts := x.name(ph, attrTimestamp)
	return "(attribute_not_exists(" + ts + ") OR " + ts + " < " + x.value(vph, str(formatTime(op.Entity.Timestamp))) + ")"
}

// tsTick is the Timestamp's precision, 100 ns, the step by which a write
// goes past a stored version.
const tsTick = 100 * time.Nanosecond

// raiseTimestamps sets the new Timestamp of the ops, before each attempt,
// to the one the service assigned or, when needed, just past every
// version they replace that is known here: the Timestamp an If-Match
// names, and the stored version a failed attempt revealed (ALL_OLD). Ops
// that share a Timestamp (a batch: Azure gives one Timestamp per
// transaction) keep sharing one. It starts from the assigned Timestamp
// every time, so a write that learned of a version, then found the entity
// deleted, does not create it with the Timestamp it had raised to: another
// writer raising past that same version chose it too, and the entity
// would answer the ETag of a deleted version, which an If-Match held by
// that writer's clients would match. The service reads the Timestamp back
// from op.Entity, so the ETag it answers is the stored one. It returns the
// index of an op whose items could not be rebuilt, with the error.
func raiseTimestamps(loc *location, plans []*plan) (int, error) {
	var floor time.Time
	for _, p := range plans {
		if p.op.Kind == store.OpDelete {
			continue
		}
		if p.op.Cond == store.CondTimestamp && p.op.Timestamp.After(floor) {
			floor = p.op.Timestamp
		}
		if p.known != nil && p.known.exists {
			ts, err := parseTime(p.known.meta.timestamp)
			if err != nil {
				return p.index, err
			}
			if ts.After(floor) {
				floor = ts
			}
		}
	}
	for _, p := range plans {
		e := p.op.Entity
		ts := p.assigned
		if !floor.IsZero() && !ts.After(floor) {
			ts = floor.Add(tsTick)
		}
		if p.op.Kind == store.OpDelete || e.Timestamp.Equal(ts) {
			continue
		}
		e.Timestamp = ts
		var err error
		switch {
		case p.op.Kind == store.OpMerge && p.known != nil:
			p.items, err = buildItems(loc, mergeInto(p.known.entity, e))
		case p.op.Kind != store.OpMerge:
			p.items, err = buildItems(loc, e)
		}
		if err != nil {
			return p.index, err
		}
	}
	return 0, nil
}

// pinVersion conditions a write on exactly the stored version v.
func pinVersion(x *expr, v *storedVersion) string {
	switch {
	case !v.exists:
		return "attribute_not_exists(" + x.name("#pk", attrPartitionKey) + ")"
	case v.meta.chunks >= 0:
		return x.name("#gen", attrGen) + " = " + x.value(":gen", str(v.meta.gen))
	}
	return x.name("#ts", attrTimestamp) + " = " + x.value(":pints", str(v.meta.timestamp)) +
		" AND attribute_not_exists(" + x.name("#ch", attrChunks) + ")"
}

func and(parts ...string) string {
	var nonEmpty []string
	for _, p := range parts {
		if p != "" {
			nonEmpty = append(nonEmpty, p)
		}
	}
	return strings.Join(nonEmpty, " AND ")
}

func condOrNil(c string) *string {
	if c == "" {
		return nil
	}
	return aws.String(c)
}

// buildActions turns the plans into DynamoDB writes; owners[i] is the op
// index of action i.
func buildActions(loc *location, plans []*plan) ([]types.TransactWriteItem, []int) {
	var actions []types.TransactWriteItem
	var owners []int
	add := func(owner int, a types.TransactWriteItem) {
		actions = append(actions, a)
		owners = append(owners, owner)
	}
	table := aws.String(loc.table)
	for _, p := range plans {
		x := newExpr()
		op := p.op
		if p.refused {
			pk := x.name("#pk", attrPartitionKey)
			add(p.index, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName:                           table,
				Key:                                 keyItem(p.pk, p.rk),
				ConditionExpression:                 aws.String("attribute_exists(" + pk + ") AND attribute_not_exists(" + pk + ")"),
				ExpressionAttributeNames:            x.namesOrNil(),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			}})
			continue
		}
		if p.known == nil {
			notChunked := func() string { return "attribute_not_exists(" + x.name("#ch", attrChunks) + ")" }
			switch op.Kind {
			case store.OpInsert:
				add(p.index, putAction(table, p.items.main, x, ifMatch(x, op)))
				for _, c := range p.items.chunks {
					add(p.index, putAction(table, c, newExpr(), ""))
				}
			case store.OpReplace:
				add(p.index, putAction(table, p.items.main, x, and(ifMatch(x, op), notChunked(), newerThanStored(x, op, "#ts", ":nts"))))
				for _, c := range p.items.chunks {
					add(p.index, putAction(table, c, newExpr(), ""))
				}
			case store.OpMerge:
				add(p.index, mergeAction(loc, p, x, notChunked()))
			case store.OpDelete:
				add(p.index, types.TransactWriteItem{Delete: &types.Delete{
					TableName:                           table,
					Key:                                 keyItem(p.pk, p.rk),
					ConditionExpression:                 condOrNil(and(ifMatch(x, op), notChunked())),
					ExpressionAttributeNames:            x.namesOrNil(),
					ExpressionAttributeValues:           x.valuesOrNil(),
					ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
				}})
			}
			continue
		}
		// The stored version is known: rewrite the entity whole.
		pin := pinVersion(x, p.known)
		oldChunks := max(p.known.meta.chunks, 0)
		newChunks := 0
		if op.Kind == store.OpDelete {
			add(p.index, types.TransactWriteItem{Delete: &types.Delete{
				TableName:                           table,
				Key:                                 keyItem(p.pk, p.rk),
				ConditionExpression:                 aws.String(pin),
				ExpressionAttributeNames:            x.namesOrNil(),
				ExpressionAttributeValues:           x.valuesOrNil(),
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			}})
		} else {
			add(p.index, putAction(table, p.items.main, x, pin))
			for _, c := range p.items.chunks {
				add(p.index, putAction(table, c, newExpr(), ""))
			}
			newChunks = len(p.items.chunks)
		}
		for i := newChunks + 1; i <= oldChunks; i++ {
			add(p.index, types.TransactWriteItem{Delete: &types.Delete{TableName: table, Key: keyItem(p.pk, chunkRowKey(p.rk, i))}})
		}
	}
	return actions, owners
}

func putAction(table *string, it item, x *expr, cond string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName:                           table,
		Item:                                it,
		ConditionExpression:                 condOrNil(cond),
		ExpressionAttributeNames:            x.namesOrNil(),
		ExpressionAttributeValues:           x.valuesOrNil(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}

// mergeAction is the one-request merge: SET the Timestamp and every sent
// property, REMOVE the other spelling of each sent name (the value it
// replaces may have been of a type stored under the other one; REMOVE of a
// missing attribute is a no-op), and raise $n by the number sent.
// Placeholders are short and numbered (#0 = :0, #r0) so 252 properties stay
// inside DynamoDB's 4 KB expression limit (3.75 KB at 252; tested).
//
// Limits after the merge: the condition admits it only when the stored
// count bound plus the sent properties cannot exceed 252 (properties sent
// again counted twice), so the property limit holds without a read; a merge
// it turns away is redone exactly from the stored entity (ALL_OLD), which
// also resets $n to the exact count. The 1 MiB limit needs no condition: an
// item that DynamoDB accepts (409,600 bytes) measures under 825 KB by
// model.EntitySize. That formula counts a name or string 2 bytes per UTF-16
// unit, at most twice its UTF-8 length, and adds at most 20 bytes per
// property over twice DynamoDB's size of it (8 of overhead, 4 for a length,
// 8 for a double DynamoDB stores in 2): 2 × 409,600 + 252 × 20 + 4.
func mergeAction(loc *location, p *plan, x *expr, notChunked string) types.TransactWriteItem {
	e := p.op.Entity
	var set, remove strings.Builder
	set.WriteString("SET ")
	set.WriteString(x.name("#t", attrTimestamp) + "=" + x.value(":t", str(formatTime(e.Timestamp))))
	// The order index attributes: a merge-upsert may create the item, and
	// an item written before the index gains them.
	shard, order := orderAttrs(loc, p.pk, p.rk)
	set.WriteString("," + x.name("#s", attrShard) + "=" + x.value(":s", shard) + "," + x.name("#o", attrOrder) + "=" + x.value(":o", order))
	for i, attr := range p.mergeAttrs {
		ph := strconv.Itoa(i)
		set.WriteString(",#" + ph + "=:" + ph)
		x.name("#"+ph, attr)
		x.value(":"+ph, p.mergeValues[i])
		if i == 0 {
			remove.WriteString(" REMOVE ")
		} else {
			remove.WriteByte(',')
		}
		remove.WriteString(x.name("#r"+ph, p.mergeRemoves[i]))
	}
	limit := ""
	if n := len(p.mergeAttrs); n > 0 {
		set.WriteString("," + x.name("#n", attrCount) + "=if_not_exists(#n," + x.value(":zero", &types.AttributeValueMemberN{Value: "0"}) +
			")+" + x.value(":sent", &types.AttributeValueMemberN{Value: strconv.Itoa(n)}))
		limit = "(attribute_not_exists(#n) OR #n <= " +
			x.value(":room", &types.AttributeValueMemberN{Value: strconv.Itoa(maxCustomProperties - n)}) + ")"
	}
	set.WriteString(remove.String())
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                           aws.String(loc.table),
		Key:                                 keyItem(p.pk, p.rk),
		UpdateExpression:                    aws.String(set.String()),
		ConditionExpression:                 aws.String(and(ifMatch(x, p.op), notChunked, limit, newerThanStored(x, p.op, "#t", ":t"))),
		ExpressionAttributeNames:            x.names,
		ExpressionAttributeValues:           x.values,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}}
}
