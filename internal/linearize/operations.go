package linearize

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// resolveETags maps every ETag an answer carried to the version it named
// (its W), per entity: the answer of a write names the version the write
// made, a read the version it read. Azure's ETag names one version of an
// entity (the versions a batch makes of several entities share one), so an
// ETag seen with two versions of an entity, or a version seen with two
// ETags, is an anomaly of its own, reported in problems.
func resolveETags(h *History) (versionOf map[etagKey]string, problems []string) {
	versionOf = map[etagKey]string{}
	etagOf := map[string]string{}
	seenBy := map[string]string{} // "e"+ETag key or "w"+W -> the op that first showed it
	see := func(op *Op, rowKey, etag, w string) {
		if etag == "" || w == "" {
			return
		}
		k := etagKey{op.PartitionKey, rowKey, etag}
		if prev, ok := versionOf[k]; ok && prev != w {
			problems = append(problems, fmt.Sprintf("ETag %s of %s/%s names two versions: %s (seen by %s) and %s (seen by %s)", etag, op.PartitionKey, rowKey, prev, seenBy["e"+k.String()], w, op.ID))
		} else if !ok {
			versionOf[k], seenBy["e"+k.String()] = w, op.ID
		}
		if prev, ok := etagOf[w]; ok && prev != etag {
			problems = append(problems, fmt.Sprintf("version %s has two ETags: %s (seen by %s) and %s (seen by %s)", w, prev, seenBy["w"+w], etag, op.ID))
		} else if !ok {
			etagOf[w], seenBy["w"+w] = etag, op.ID
		}
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		if op.Outcome != OK {
			continue
		}
		switch op.Kind {
		case Get:
			if op.Read != nil {
				see(op, op.RowKey, op.ETag, op.Read.W)
			}
		case Query:
			for _, e := range op.Entities {
				see(op, e.RowKey, e.ETag, e.Props.W)
			}
		case Batch:
			for j, a := range op.Actions {
				if j < len(op.ETags) && a.Kind != Delete {
					see(op, a.RowKey, op.ETags[j], a.Props.W)
				}
			}
		case Delete:
		default:
			see(op, op.RowKey, op.ETag, op.Props.W)
		}
	}
	return versionOf, problems
}

// etagKey is an ETag of one entity.
type etagKey struct{ partitionKey, rowKey, etag string }

func (k etagKey) String() string { return k.partitionKey + "/" + k.rowKey + " " + k.etag }

// operations turns h into Porcupine's operations. An indeterminate write
// returns when it surely landed if it ever did (landedBy), else after
// every other operation, as Porcupine handles an operation whose outcome
// is unknown. An operation not performed, or a read that failed, changed
// nothing and showed nothing, and is left out. A partition query becomes
// one snapshot read (SnapshotQueries) or a beginning and an end between
// which each row must have held the version returned (model.go): for each
// entity, a version that existed at some point during the query.
func operations(h *History, versionOf map[etagKey]string) ([]porcupine.Operation, []string) {
	if len(h.RowKeys) > maxRows || h.Clients > maxClients {
		return nil, []string{fmt.Sprintf("%d row keys and %d clients, at most %d and %d", len(h.RowKeys), h.Clients, maxRows, maxClients)}
	}
	rowOf := map[string]int{}
	for i, r := range h.RowKeys {
		rowOf[r] = i
	}
	partOf := map[string]int{}
	for i, p := range h.PartitionKeys {
		partOf[p] = i
	}
	var end int64
	for _, op := range h.Ops {
		end = max(end, op.Return, op.Call)
	}
	end++
	var problems []string
	changeOf := func(op *Op, kind Kind, rowKey, ifMatch string, props Props) (change, bool) {
		row, ok := rowOf[rowKey]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: row key %q is not among the history's", op.ID, rowKey))
			return change{}, false
		}
		c := change{kind: kind, row: row, props: props}
		switch ifMatch {
		case "":
		case "*":
			c.cond = condAny
		default:
			c.cond = condVersion
			if c.matchW, ok = versionOf[etagKey{op.PartitionKey, rowKey, ifMatch}]; !ok {
				problems = append(problems, fmt.Sprintf("%s: If-Match %s names no version any answer carried", op.ID, ifMatch))
				return change{}, false
			}
		}
		return c, true
	}
	var out []porcupine.Operation
	add := func(op *Op, c *call, a *answer) {
		ret := op.Return
		if op.Kind.writes() && a.outcome == Indeterminate {
			ret = landedBy(h, op, c, versionOf, end)
		}
		out = append(out, porcupine.Operation{ClientId: op.Client, Input: c, Call: op.Call, Output: a, Return: ret})
	}
	for i := range h.Ops {
		op := &h.Ops[i]
		part, ok := partOf[op.PartitionKey]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: partition key %q is not among the history's", op.ID, op.PartitionKey))
			continue
		}
		if op.Outcome == NotPerformed || op.Outcome == Unexpected || !op.Kind.writes() && op.Outcome != OK && !op.Outcome.definite() {
			// Nothing happened, or nothing was learned: the operation
			// fits anywhere, and leaving it out spares the search.
			continue
		}
		a := &answer{outcome: op.Outcome, failed: op.Failed}
		switch op.Kind {
		case Get:
			row, ok := rowOf[op.RowKey]
			if !ok {
				problems = append(problems, fmt.Sprintf("%s: row key %q is not among the history's", op.ID, op.RowKey))
				continue
			}
			if op.Outcome == OK && op.Read != nil {
				a.read = version{present: true, props: *op.Read}
			}
			add(op, &call{op: op, part: part, kind: Get, row: row}, a)
		case Query:
			if op.Outcome != OK {
				continue
			}
			var rows partition
			for _, e := range op.Entities {
				row, ok := rowOf[e.RowKey]
				if !ok {
					problems = append(problems, fmt.Sprintf("%s: the query returned row key %q, which no operation wrote", op.ID, e.RowKey))
					continue
				}
				rows[row] = version{present: true, props: e.Props}
			}
			if h.SnapshotQueries && op.Pages <= 1 {
				add(op, &call{op: op, part: part, kind: Query}, &answer{outcome: OK, rows: rows})
				continue
			}
			a := &answer{outcome: OK, rows: rows}
			id := int32(i + 1)
			out = append(out,
				porcupine.Operation{ClientId: op.Client, Input: &call{op: op, part: part, kind: queryBegins, query: id}, Call: op.Call, Output: a, Return: op.Call},
				porcupine.Operation{ClientId: op.Client, Input: &call{op: op, part: part, kind: queryEnds, query: id}, Call: op.Return, Output: a, Return: op.Return})
		case Batch:
			c := &call{op: op, part: part, kind: Batch}
			for _, act := range op.Actions {
				ch, ok := changeOf(op, act.Kind, act.RowKey, act.IfMatch, act.Props)
				if !ok {
					c = nil
					break
				}
				c.changes = append(c.changes, ch)
			}
			if c != nil {
				add(op, c, a)
			}
		default:
			ch, ok := changeOf(op, op.Kind, op.RowKey, op.IfMatch, op.Props)
			if ok {
				add(op, &call{op: op, part: part, kind: op.Kind, changes: []change{ch}}, a)
			}
		}
	}
	return out, problems
}

// landedBy is the latest instant at which the indeterminate write op (the
// model's c) can have taken effect, or end when nothing bounds it. The
// bounds hold in every order that explains the history, so they cut
// Porcupine's search without changing its verdict:
//   - a barrier after its call (the server that got it was killed);
//   - a read that returned what it wrote (its id as W, A, B or C: no other
//     write writes that id), which it must precede;
//   - with If-Match on an ETag, any definite answer, asked after its call,
//     showing its row in another version: the version it needs existed
//     before its call, and a version never comes back, so past that point
//     its condition can never hold again.
func landedBy(h *History, op *Op, c *call, versionOf map[etagKey]string, end int64) int64 {
	bound := end
	earlier := func(t int64) { bound = min(bound, max(t, op.Call)) }
	for _, b := range h.Barriers {
		if op.Call < b {
			earlier(max(b, op.Return))
		}
	}
	wrote := map[string]bool{}
	for _, ch := range c.changes {
		if ch.props.W != "" {
			wrote[ch.props.W] = true
		}
	}
	shows := func(p Props) bool { return wrote[p.W] || wrote[p.A] || wrote[p.B] || wrote[p.C] }
	needs := map[string]string{} // row key -> the W its If-Match needs
	for i, ch := range c.changes {
		if ch.cond == condVersion {
			rk := op.RowKey
			if op.Kind == Batch {
				rk = op.Actions[i].RowKey
			}
			needs[rk] = ch.matchW
		}
	}
	// elsewhere reports whether o's answer shows row rk in another version
	// than want.
	elsewhere := func(o *Op, rk, want string) bool {
		switch o.Kind {
		case Get:
			return o.RowKey == rk && (o.Outcome == NotFound || o.Outcome == OK && o.Read != nil && o.Read.W != want)
		case Query:
			for _, e := range o.Entities {
				if e.RowKey == rk {
					return e.Props.W != want
				}
			}
			return o.Outcome == OK
		case Batch:
			for i, a := range o.Actions {
				if a.RowKey != rk {
					continue
				}
				failedHere := i == o.Failed && (o.Outcome == NotFound || o.Outcome == ConditionFailed && versionOf[etagKey{o.PartitionKey, rk, a.IfMatch}] == want)
				return o.Outcome == OK || failedHere
			}
			return false
		}
		return o.RowKey == rk && (o.Outcome == OK || o.Outcome == NotFound ||
			o.Outcome == ConditionFailed && versionOf[etagKey{o.PartitionKey, rk, o.IfMatch}] == want)
	}
	for i := range h.Ops {
		o := &h.Ops[i]
		if o == op || o.PartitionKey != op.PartitionKey || o.Outcome != OK && !o.Outcome.definite() {
			continue
		}
		if o.Outcome == OK {
			if o.Read != nil && shows(*o.Read) {
				earlier(o.Return)
			}
			for _, e := range o.Entities {
				if shows(e.Props) {
					earlier(o.Return)
				}
			}
		}
		if o.Call <= op.Call {
			continue
		}
		for rk, want := range needs {
			if elsewhere(o, rk, want) {
				earlier(o.Return)
			}
		}
	}
	return bound
}
