package linearize

import (
	"fmt"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
)

// Report is what checking one history found.
type Report struct {
	// Ops counts the operations recorded; Indeterminate those whose
	// outcome is unknown, NotPerformed those refused (503, a refused
	// connection).
	Ops, Indeterminate, NotPerformed int
	// Result is Porcupine's: Ok, Illegal (no order of the operations
	// explains every answer), or Unknown (the search ran out of time).
	Result porcupine.CheckResult
	// Problems are anomalies found before the search: an ETag naming two
	// versions, a version with two ETags, an unexpected answer, a key
	// nobody wrote.
	Problems []string
}

// Anomalies counts what the check found wrong: each problem, and a
// history no order explains.
func (r Report) Anomalies() int {
	n := len(r.Problems)
	if r.Result == porcupine.Illegal {
		n++
	}
	return n
}

// Check checks h against Azure's semantics (model.go) with Porcupine,
// giving the search at most timeout (0: no limit).
func Check(h *History, timeout time.Duration) Report {
	var r Report
	for _, op := range h.Ops {
		r.Ops++
		switch op.Outcome {
		case Indeterminate:
			r.Indeterminate++
		case NotPerformed:
			r.NotPerformed++
		case Unexpected:
			r.Problems = append(r.Problems, "unexpected answer: "+op.String())
		}
	}
	versionOf, problems := resolveETags(h)
	r.Problems = append(r.Problems, problems...)
	ops, problems := operations(h, versionOf)
	r.Problems = append(r.Problems, problems...)
	r.Result = porcupine.CheckOperationsTimeout(newModel(h), ops, timeout)
	return r
}

// illegal reports whether h is surely not linearizable, with the ETags of
// the whole history it was cut from (cutting drops answers, not facts).
func illegal(h *History, versionOf map[etagKey]string, timeout time.Duration) bool {
	ops, _ := operations(h, versionOf)
	return porcupine.CheckOperationsTimeout(newModel(h), ops, timeout) == porcupine.Illegal
}

// Shrink returns the shortest history it can find that is still not
// linearizable and still evidence against h: the ops of one failing
// partition, cut at the earliest instant where no order explains them, then
// without the reads and refused writes (operations that only look) that
// the failure does not need, dropped in chunks as delta debugging does. A cut history is evidence because
// linearizability holds for prefixes: operations still running at the cut
// count as indeterminate writes, or for reads, are dropped. Removing an
// operation that changed nothing only removes constraints. Shrink gives up
// refining after budget and returns what it has.
func Shrink(h *History, budget time.Duration) *History {
	deadline := time.Now().Add(budget)
	versionOf, _ := resolveETags(h)
	const stepTimeout = 10 * time.Second
	var best *History
	for _, pk := range h.PartitionKeys {
		sub := h.only(func(op *Op) bool { return op.PartitionKey == pk })
		sub.PartitionKeys = []string{pk}
		if (best == nil || len(sub.Ops) < len(best.Ops)) && illegal(sub, versionOf, stepTimeout) {
			best = sub
		}
	}
	if best == nil {
		return h
	}
	// The earliest cut: illegal prefixes stay illegal as they grow, so a
	// binary search over the instants of calls and returns finds it.
	instants := make([]int64, 0, 2*len(best.Ops))
	for _, op := range best.Ops {
		instants = append(instants, op.Call, op.Return)
	}
	slices.Sort(instants)
	lo, hi := 0, len(instants)-1
	for lo < hi && time.Now().Before(deadline) {
		mid := (lo + hi) / 2
		if illegal(best.cut(instants[mid]), versionOf, stepTimeout) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if cut := best.cut(instants[hi]); illegal(cut, versionOf, stepTimeout) {
		best = cut
	}
	// Drop the operations that only look, in chunks halving down to one
	// at a time (delta debugging): each try is a search that must fail.
	for chunks := 2; time.Now().Before(deadline); {
		var looking []string
		for i := range best.Ops {
			if onlyLooks(&best.Ops[i]) {
				looking = append(looking, best.Ops[i].ID)
			}
		}
		if len(looking) == 0 {
			break
		}
		chunks = min(chunks, len(looking))
		dropped := false
		for c := 0; c < chunks && !dropped && time.Now().Before(deadline); c++ {
			drop := map[string]bool{}
			for _, id := range looking[c*len(looking)/chunks : (c+1)*len(looking)/chunks] {
				drop[id] = true
			}
			without := best.only(func(op *Op) bool { return !drop[op.ID] })
			if illegal(without, versionOf, stepTimeout) {
				best, dropped = without, true
			}
		}
		switch {
		case dropped:
			chunks = max(chunks-1, 2)
		case chunks == len(looking):
			return best
		default:
			chunks = min(2*chunks, len(looking))
		}
	}
	return best
}

// onlyLooks reports whether op surely changed nothing and only observed:
// a read, or a write refused for what it found (404, 409, 412). A write
// answered 503 changed nothing either, but stays: when a read saw it,
// it is the evidence.
func onlyLooks(op *Op) bool {
	return !op.Kind.writes() || op.Outcome.definite() && op.Outcome != OK
}

// only is a copy of h with the operations keep accepts.
func (h *History) only(keep func(*Op) bool) *History {
	out := *h
	out.Ops = nil
	for i := range h.Ops {
		if keep(&h.Ops[i]) {
			out.Ops = append(out.Ops, h.Ops[i])
		}
	}
	return &out
}

// cut is h as it stood at instant at: operations called later are gone;
// writes still running become indeterminate, reads still running are
// dropped.
func (h *History) cut(at int64) *History {
	out := *h
	out.Ops = nil
	for _, op := range h.Ops {
		if op.Call > at {
			continue
		}
		if op.Return > at {
			if !op.Kind.writes() {
				continue
			}
			op = Op{ID: op.ID, Client: op.Client, Call: op.Call, Return: at, Kind: op.Kind, PartitionKey: op.PartitionKey,
				RowKey: op.RowKey, IfMatch: op.IfMatch, Props: op.Props, Actions: op.Actions,
				Outcome: Indeterminate, Error: fmt.Sprintf("still running at the cut (answered %s)", op.Outcome)}
		}
		out.Ops = append(out.Ops, op)
	}
	return &out
}

// Visualize writes Porcupine's HTML view of h to path: each client's
// operations on a time line and, for a history no order explains, the
// longest partial orders found and where each one fails.
func Visualize(h *History, path string) error {
	versionOf, _ := resolveETags(h)
	ops, _ := operations(h, versionOf)
	model := newModel(h)
	_, info := porcupine.CheckOperationsVerbose(model, ops, time.Minute)
	return porcupine.VisualizePath(model, info, path)
}
