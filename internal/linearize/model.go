package linearize

import (
	"hash/fnv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// maxRows bounds the row keys of a history, so a partition's state is a
// comparable array.
const maxRows = 8

// version is an entity as the model holds it: absent, or its properties.
// Its ETag is not part of it: Props.W names the version, and resolveETags
// maps each ETag seen to the W it named.
type version struct {
	present bool
	props   Props
}

func (v version) String() string {
	if !v.present {
		return "absent"
	}
	return v.props.String()
}

// partition is one PartitionKey's entities: each row's version.
type partition [maxRows]version

// maxClients bounds the clients of a history: each may have one query
// open in the state.
const maxClients = 16

// state is the model's state of one PartitionKey: its entities, and the
// partition queries open at this point of the order, each with the rows
// whose returned version the partition has held since the query began.
// A query is checked as one read per row, each anywhere inside the
// query's interval; following it in the state, from its beginning to its
// end, is the same check without trying every order of those reads (which
// Porcupine would, at a cost exponential in the rows).
type state struct {
	rows partition
	open [maxClients]openQuery
}

type openQuery struct {
	id   int32 // 1 + the query's index in the history; 0: none open
	want *partition
	seen uint8 // a bit per row
}

// see records, for every open query, the rows whose returned version the
// partition now holds.
func (s *state) see() {
	for i := range s.open {
		q := &s.open[i]
		if q.id == 0 {
			continue
		}
		for r := range s.rows {
			if s.rows[r] == q.want[r] {
				q.seen |= 1 << r
			}
		}
	}
}

// condition is the If-Match of a change.
type condition uint8

const (
	condNone    condition = iota // no If-Match: the upserts, and Insert
	condAny                      // If-Match: *
	condVersion                  // If-Match: an ETag, resolved to the W it names
)

// change is one write the model applies: a single-entity write, or one
// action of a batch.
type change struct {
	kind   Kind
	row    int
	cond   condition
	matchW string // with condVersion
	props  Props
}

// applyTo applies c to p when Azure's rules let it, and says what Azure
// answers.
func (c change) applyTo(p *partition) Outcome {
	cur := p[c.row]
	switch c.kind {
	case Insert:
		if cur.present {
			return Conflict
		}
		p[c.row] = version{present: true, props: c.props}
		return OK
	case InsertOrReplace:
		p[c.row] = version{present: true, props: c.props}
		return OK
	case InsertOrMerge:
		if cur.present {
			p[c.row] = version{present: true, props: c.props.merged(cur.props)}
		} else {
			p[c.row] = version{present: true, props: c.props}
		}
		return OK
	}
	// Replace, Merge and Delete carry If-Match: the entity must exist (404
	// otherwise, ETag or *), and with an ETag be that version (412).
	if !cur.present {
		return NotFound
	}
	if c.cond == condVersion && cur.props.W != c.matchW {
		return ConditionFailed
	}
	switch c.kind {
	case Replace:
		p[c.row] = version{present: true, props: c.props}
	case Merge:
		p[c.row] = version{present: true, props: c.props.merged(cur.props)}
	case Delete:
		p[c.row] = version{}
	}
	return OK
}

// call is one operation as the model sees it: a write (one change, or a
// batch's), a read of one key, a snapshot query of the whole partition,
// or the beginning or the end of a query checked row by row.
type call struct {
	op      *Op // the recorded operation, for descriptions
	part    int // index into History.PartitionKeys
	kind    Kind
	row     int // Get: index into History.RowKeys
	changes []change
	// query is 1 + the index of a row-by-row query's op in the history,
	// for queryBegins and queryEnds.
	query int32
}

// The two halves of a partition query checked row by row: each is an
// operation of an instant, the query's call and its return.
const (
	queryBegins Kind = "queryBegins"
	queryEnds   Kind = "queryEnds"
)

// answer is what came back, in the model's terms.
type answer struct {
	outcome Outcome
	failed  int       // a failed batch's failing action
	read    version   // Get
	rows    partition // a query's
}

// steps is Azure's semantics: the states op can leave behind. A read must
// return the current version; a query checked row by row must have seen,
// between its beginning and its end, each row's returned version. A write
// with a definite answer must answer what the rules say of the current
// state, and then applies. An indeterminate write may apply (if its
// conditions hold) or not: both states go on. A write not performed (503,
// a refused connection) changes nothing, so a later read of its W cannot
// be explained.
func steps(st, input, output any) []any {
	s := st.(state)
	c := input.(*call)
	a := output.(*answer)
	switch c.kind {
	case Get:
		if a.outcome.definite() && s.rows[c.row] != a.read {
			return nil
		}
		return []any{s}
	case Query:
		if s.rows != a.rows {
			return nil
		}
		return []any{s}
	case queryBegins:
		s.open[c.op.Client] = openQuery{id: c.query, want: &a.rows}
		s.see()
		return []any{s}
	case queryEnds:
		if q := s.open[c.op.Client]; q.id != c.query || q.seen != 1<<maxRows-1 {
			return nil
		}
		s.open[c.op.Client] = openQuery{}
		return []any{s}
	}
	if a.outcome == NotPerformed || a.outcome == Unexpected {
		return []any{s}
	}
	next, outcome, failed := s.rows, OK, 0
	for i, ch := range c.changes {
		if outcome = ch.applyTo(&next); outcome != OK {
			next, failed = s.rows, i
			break
		}
	}
	switch {
	case a.outcome == Indeterminate:
		if next == s.rows {
			return []any{s}
		}
		applied := s
		applied.rows = next
		applied.see()
		return []any{s, applied}
	case outcome != a.outcome, outcome != OK && c.kind == Batch && failed != a.failed:
		return nil
	}
	s.rows = next
	s.see()
	return []any{s}
}

func hashState(st any) uint64 {
	s := st.(state)
	h := fnv.New64a()
	var b []byte
	for _, q := range s.open {
		b = append(b, byte(q.id), byte(q.id>>8), q.seen)
	}
	for _, v := range s.rows {
		if v.present {
			b = append(b, 1)
			for _, p := range [...]string{v.props.W, v.props.A, v.props.B, v.props.C, v.props.Large, v.props.Extra} {
				b = append(append(b, p...), 0)
			}
		} else {
			b = append(b, 0)
		}
	}
	h.Write(b)
	return h.Sum64()
}

// newModel is the model of histories over h's keys; its descriptions name
// rows by their keys. Porcupine follows the set of states a prefix of the
// order can leave (NondeterministicModel), so an indeterminate write,
// applied or not, is one step.
func newModel(h *History) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
			byPart := make([][]porcupine.Operation, len(h.PartitionKeys))
			for _, op := range ops {
				p := op.Input.(*call).part
				byPart[p] = append(byPart[p], op)
			}
			var out [][]porcupine.Operation
			for _, ops := range byPart {
				if len(ops) > 0 {
					out = append(out, ops)
				}
			}
			return out
		},
		Init: func() []any { return []any{state{}} },
		Step: steps,
		Hash: hashState,
		DescribeOperation: func(input, output any) string {
			return describe(h, input.(*call), output.(*answer))
		},
		DescribeState: func(st any) string {
			s := st.(state)
			var parts []string
			for i, row := range h.RowKeys {
				parts = append(parts, row+" "+s.rows[i].String())
			}
			return strings.Join(parts, ", ")
		},
	}
	return nm.ToModel()
}

func describe(h *History, c *call, a *answer) string {
	op := c.op
	switch c.kind {
	case Get:
		prefix := op.ID + " get " + h.RowKeys[c.row]
		if a.outcome.definite() {
			return prefix + " -> " + a.read.String()
		}
		return prefix + " -> " + string(a.outcome)
	case queryBegins:
		return op.ID + " query " + op.PartitionKey + " begins"
	case Query, queryEnds:
		var rows []string
		for i, row := range h.RowKeys {
			rows = append(rows, row+" "+a.rows[i].String())
		}
		prefix := op.ID + " query " + op.PartitionKey + " -> "
		if c.kind == queryEnds {
			prefix = op.ID + " query " + op.PartitionKey + " ends, each row seen during it: "
		}
		return prefix + strings.Join(rows, ", ")
	}
	return op.String()
}
