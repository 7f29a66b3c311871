package httpapi

// DefaultAnswerBudget is the Options.AnswerBudget of a handler that sets
// none (the local server): 4 MiB of body per query answer. The stores
// already end a page at a budget of stored bytes, but an answer is larger
// than what it stores: a wide entity's JSON in full metadata (annotations,
// odata.id with the base URL) measured about 10.8 KB for 250 Int64
// properties, so a legal page of 1,000 came to 10.8 MB. 4 MiB keeps every
// answer's buffer bounded (see Limits.MaxAnswerBytes) and matches Azure's own
// limit on request bodies, while a page of 1,000 ordinary entities (a few
// hundred bytes each) is never cut.
const DefaultAnswerBudget = 4 << 20

// answerBudget counts a list answer (Query Entities, Query Tables) against
// Options.AnswerBudget as it is written. An answer stops before the item that
// would not fit and ends with a continuation naming the last item sent:
// the service resumes strictly after a continuation (tables.Continuation,
// QueryTablesInput.NextTableName), so the next page starts at the first
// item not sent. Azure pages may hold fewer items than $top along with a
// continuation ("Query timeout and pagination"), and every SDK follows it.
// The first item is always sent, so a query makes progress whatever its
// entities' size; one entity of at most 1 MiB stays well inside every front
// door (docs/aws.md, "Request and answer sizes on AWS").
type answerBudget struct {
	left int
	cost func([]byte) int
}

func (h *Handler) answerBudget() answerBudget {
	return answerBudget{left: h.opts.AnswerBudget, cost: h.opts.AnswerCost}
}

// take charges piece, the bytes of one item (or of the list's frame), and
// reports whether the answer is still within the budget.
func (a *answerBudget) take(piece []byte) bool {
	a.left -= a.cost(piece)
	return a.left >= 0
}

// bodyLen is the AnswerCost of a front door that carries the body as it is.
func bodyLen(b []byte) int { return len(b) }
