package linearize

import (
	"fmt"
	"math/rand/v2"
)

// workload chooses the operations of one client: random kinds over a small
// key set, so that clients collide, with If-Match on the ETag the client
// last saw of the entity or on *.
type workload struct {
	rng    *rand.Rand
	client int
	n      int
	pks    []string
	rks    []string
	// seen is the ETag the client last saw of each entity ("pk/rk").
	seen map[string]string
	// large is the share of writes that carry the large payload.
	large float64
}

func newWorkload(seed uint64, client int, pks, rks []string, large float64) *workload {
	return &workload{rng: rand.New(rand.NewPCG(seed, uint64(client))), client: client, pks: pks, rks: rks, seen: map[string]string{}, large: large}
}

// next is the client's next operation, its request filled in.
func (w *workload) next() *Op {
	w.n++
	op := &Op{ID: fmt.Sprintf("c%d.%d", w.client, w.n), Client: w.client, PartitionKey: w.pick(w.pks)}
	switch r := w.rng.IntN(100); {
	case r < 14:
		op.Kind, op.RowKey = Get, w.pick(w.rks)
	case r < 22:
		// A third of the queries page: $top 1 to 3 over up to 6 rows.
		op.Kind = Query
		if w.rng.IntN(3) == 0 {
			op.Top = 1 + w.rng.IntN(3)
		}
	case r < 88:
		kinds := [...]Kind{Insert, Insert, Replace, Replace, Merge, Merge, InsertOrReplace, InsertOrMerge, Delete, Delete}
		a := w.action(op.ID, op.PartitionKey, kinds[(r-22)%len(kinds)], w.pick(w.rks))
		op.Kind, op.RowKey, op.IfMatch, op.Props = a.Kind, a.RowKey, a.IfMatch, a.Props
	default:
		// 2 to 5 operations on distinct entities of one partition.
		op.Kind = Batch
		n := min(2+w.rng.IntN(4), len(w.rks))
		kinds := [...]Kind{Insert, Replace, Merge, InsertOrReplace, InsertOrMerge, Delete}
		for i, row := range w.rng.Perm(len(w.rks))[:n] {
			op.Actions = append(op.Actions, w.action(fmt.Sprintf("%s.%d", op.ID, i), op.PartitionKey, kinds[w.rng.IntN(len(kinds))], w.rks[row]))
		}
	}
	return op
}

// action is one write with id as its W: each of A, B and C is set with
// even odds (a merge keeps the others), the large payload with the
// workload's odds, and Replace, Merge and Delete carry If-Match on the
// last ETag seen, or on *.
func (w *workload) action(id, pk string, kind Kind, rk string) Action {
	a := Action{Kind: kind, RowKey: rk}
	if kind != Delete {
		a.Props.W = id
		for _, p := range []*string{&a.Props.A, &a.Props.B, &a.Props.C} {
			if w.rng.IntN(2) == 0 {
				*p = id
			}
		}
		if w.rng.Float64() < w.large {
			a.Props.Large = id
		}
	}
	if kind == Replace || kind == Merge || kind == Delete {
		a.IfMatch = "*"
		if etag, ok := w.seen[pk+"/"+rk]; ok && w.rng.IntN(10) < 7 {
			a.IfMatch = etag
		}
	}
	return a
}

func (w *workload) pick(keys []string) string { return keys[w.rng.IntN(len(keys))] }

// observe keeps the ETags op's answer showed.
func (w *workload) observe(op *Op) {
	key := func(rk string) string { return op.PartitionKey + "/" + rk }
	switch {
	case op.Outcome == NotFound && op.Kind != Batch:
		delete(w.seen, key(op.RowKey))
	case op.Outcome != OK:
	case op.Kind == Query:
		for _, rk := range w.rks {
			delete(w.seen, key(rk))
		}
		for _, e := range op.Entities {
			w.seen[key(e.RowKey)] = e.ETag
		}
	case op.Kind == Batch:
		for i, a := range op.Actions {
			if a.Kind == Delete || i >= len(op.ETags) {
				delete(w.seen, key(a.RowKey))
			} else {
				w.seen[key(a.RowKey)] = op.ETags[i]
			}
		}
	case op.Kind == Delete:
		delete(w.seen, key(op.RowKey))
	default:
		w.seen[key(op.RowKey)] = op.ETag
	}
}
