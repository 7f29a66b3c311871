package linearize

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// hist builds a history over p0 and p1, rows r0 to r2, from ops whose
// times are given in the tests.
func hist(snapshot bool, ops ...Op) *History {
	return &History{Name: "model", Clients: 4, PartitionKeys: []string{"p0", "p1"}, RowKeys: []string{"r0", "r1", "r2"}, SnapshotQueries: snapshot, Ops: ops}
}

func withBarrier(at int64, h *History) *History {
	h.Barriers = []int64{at}
	return h
}

func w(id string, client int, call, ret int64, kind Kind, row, ifMatch string, props Props, outcome Outcome, etag string) Op {
	return Op{ID: id, Client: client, Call: call, Return: ret, Kind: kind, PartitionKey: "p0", RowKey: row, IfMatch: ifMatch, Props: props, Outcome: outcome, ETag: etag}
}

func get(id string, client int, call, ret int64, row string, read *Props, etag string) Op {
	op := Op{ID: id, Client: client, Call: call, Return: ret, Kind: Get, PartitionKey: "p0", RowKey: row, Outcome: OK, Read: read, ETag: etag}
	if read == nil {
		op.Outcome = NotFound
	}
	return op
}

func query(id string, client int, call, ret int64, entities ...Entity) Op {
	return Op{ID: id, Client: client, Call: call, Return: ret, Kind: Query, PartitionKey: "p0", Outcome: OK, Entities: entities}
}

func p(w string, abc ...string) *Props {
	out := &Props{W: w}
	for _, s := range abc {
		name, v, _ := strings.Cut(s, "=")
		switch name {
		case "A":
			out.A = v
		case "B":
			out.B = v
		case "C":
			out.C = v
		}
	}
	return out
}

// TestModel checks the model on small histories whose answer is known: each
// either has an order that explains it or has none.
func TestModel(t *testing.T) {
	ins := func(id string, client int, call, ret int64, row string, outcome Outcome, etag string, abc ...string) Op {
		return w(id, client, call, ret, Insert, row, "", *p(id, abc...), outcome, etag)
	}
	batch := func(id string, client int, call, ret int64, outcome Outcome, failed int, etags []string, actions ...Action) Op {
		return Op{ID: id, Client: client, Call: call, Return: ret, Kind: Batch, PartitionKey: "p0", Actions: actions, Outcome: outcome, Failed: failed, ETags: etags}
	}
	for _, tc := range []struct {
		name         string
		h            *History
		linearizable bool
	}{
		{"a read after an acknowledged insert sees it", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1", "A=c0.1"),
			get("c1.1", 1, 20, 30, "r0", p("c0.1", "A=c0.1"), "e1")), true},
		{"a read after an acknowledged insert misses it", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			get("c1.1", 1, 20, 30, "r0", nil, "")), false},
		{"a read concurrent with the insert may miss it", hist(false,
			ins("c0.1", 0, 0, 30, "r0", OK, "e1"),
			get("c1.1", 1, 10, 20, "r0", nil, "")), true},
		{"an indeterminate insert may never apply", hist(false,
			ins("c0.1", 0, 0, 10, "r0", Indeterminate, ""),
			get("c1.1", 1, 20, 30, "r0", nil, "")), true},
		{"an indeterminate insert may apply late, after a read missed it", hist(false,
			ins("c0.1", 0, 0, 10, "r0", Indeterminate, ""),
			get("c1.1", 1, 20, 30, "r0", nil, ""),
			get("c1.2", 1, 40, 50, "r0", p("c0.1"), "e1"),
			w("c1.3", 1, 60, 70, Replace, "r0", "e1", *p("c1.3"), OK, "e2")), true},
		{"an insert answered 503 was not performed", hist(false,
			ins("c0.1", 0, 0, 10, "r0", NotPerformed, ""),
			get("c1.1", 1, 20, 30, "r0", p("c0.1"), "e1")), false},
		{"a second insert conflicts", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			ins("c1.1", 1, 20, 30, "r0", Conflict, "")), true},
		{"a second insert succeeds", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			ins("c1.1", 1, 20, 30, "r0", OK, "e2")), false},
		{"If-Match on a replaced version fails", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			w("c1.1", 1, 20, 30, Replace, "r0", "*", *p("c1.1"), OK, "e2"),
			w("c0.2", 0, 40, 50, Merge, "r0", "e1", *p("c0.2"), ConditionFailed, "")), true},
		{"If-Match on a replaced version succeeds", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			w("c1.1", 1, 20, 30, Replace, "r0", "*", *p("c1.1"), OK, "e2"),
			w("c0.2", 0, 40, 50, Merge, "r0", "e1", *p("c0.2"), OK, "e3")), false},
		{"If-Match on an absent entity is 404", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			w("c1.1", 1, 20, 30, Delete, "r0", "*", Props{}, OK, ""),
			w("c0.2", 0, 40, 50, Replace, "r0", "e1", *p("c0.2"), NotFound, "")), true},
		{"a merge keeps what it does not name", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1", "A=c0.1", "B=c0.1"),
			w("c1.1", 1, 20, 30, Merge, "r0", "e1", *p("c1.1", "B=c1.1"), OK, "e2"),
			get("c0.2", 0, 40, 50, "r0", p("c1.1", "A=c0.1", "B=c1.1"), "e2")), true},
		{"a merge that drops a property", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1", "A=c0.1", "B=c0.1"),
			w("c1.1", 1, 20, 30, Merge, "r0", "e1", *p("c1.1", "B=c1.1"), OK, "e2"),
			get("c0.2", 0, 40, 50, "r0", p("c1.1", "B=c1.1"), "e2")), false},
		{"a replace drops what it does not name", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1", "A=c0.1"),
			w("c1.1", 1, 20, 30, InsertOrReplace, "r0", "", *p("c1.1", "B=c1.1"), OK, "e2"),
			get("c0.2", 0, 40, 50, "r0", p("c1.1", "A=c0.1", "B=c1.1"), "e2")), false},
		{"a failed batch applies nothing", hist(false,
			ins("c0.1", 0, 0, 10, "r1", OK, "e1"),
			batch("c1.1", 1, 20, 30, Conflict, 1, nil, Action{Kind: Insert, RowKey: "r0", Props: *p("c1.1.0")}, Action{Kind: Insert, RowKey: "r1", Props: *p("c1.1.1")}),
			get("c0.2", 0, 40, 50, "r0", nil, "")), true},
		{"a failed batch left its first action applied", hist(false,
			ins("c0.1", 0, 0, 10, "r1", OK, "e1"),
			batch("c1.1", 1, 20, 30, Conflict, 1, nil, Action{Kind: Insert, RowKey: "r0", Props: *p("c1.1.0")}, Action{Kind: Insert, RowKey: "r1", Props: *p("c1.1.1")}),
			get("c0.2", 0, 40, 50, "r0", p("c1.1.0"), "e2")), false},
		{"a failed batch names the wrong action", hist(false,
			ins("c0.1", 0, 0, 10, "r1", OK, "e1"),
			batch("c1.1", 1, 20, 30, Conflict, 0, nil, Action{Kind: Insert, RowKey: "r0", Props: *p("c1.1.0")}, Action{Kind: Insert, RowKey: "r1", Props: *p("c1.1.1")})), false},
		{"a query during a batch sees each row before or after it", hist(false,
			batch("c1.1", 1, 20, 30, OK, 0, []string{"e1", "e1"}, Action{Kind: Insert, RowKey: "r0", Props: *p("c1.1.0")}, Action{Kind: Insert, RowKey: "r1", Props: *p("c1.1.1")}),
			query("c0.1", 0, 10, 40, Entity{RowKey: "r0", ETag: "e1", Props: *p("c1.1.0")})), true},
		{"a snapshot query during a batch sees half of it", hist(true,
			batch("c1.1", 1, 20, 30, OK, 0, []string{"e1", "e1"}, Action{Kind: Insert, RowKey: "r0", Props: *p("c1.1.0")}, Action{Kind: Insert, RowKey: "r1", Props: *p("c1.1.1")}),
			query("c0.1", 0, 10, 40, Entity{RowKey: "r0", ETag: "e1", Props: *p("c1.1.0")})), false},
		{"a query after a batch misses half of it", hist(false,
			batch("c1.1", 1, 0, 10, OK, 0, []string{"e1", "e1"}, Action{Kind: Insert, RowKey: "r0", Props: *p("c1.1.0")}, Action{Kind: Insert, RowKey: "r1", Props: *p("c1.1.1")}),
			query("c0.1", 0, 20, 40, Entity{RowKey: "r0", ETag: "e1", Props: *p("c1.1.0")})), false},
		{"a query sees each row in a version of its interval, not one instant", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			w("c1.1", 1, 30, 40, Delete, "r0", "*", Props{}, OK, ""),
			ins("c1.2", 1, 50, 60, "r1", OK, "e2"),
			query("c2.1", 2, 20, 70, Entity{RowKey: "r0", ETag: "e1", Props: *p("c0.1")}, Entity{RowKey: "r1", ETag: "e2", Props: *p("c1.2")})), true},
		{"a query sees a version from before it began", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			w("c1.1", 1, 15, 18, Delete, "r0", "*", Props{}, OK, ""),
			query("c2.1", 2, 20, 70, Entity{RowKey: "r0", ETag: "e1", Props: *p("c0.1")})), false},
		{"an indeterminate write does not land after its server died", withBarrier(15, hist(false,
			ins("c0.1", 0, 0, 10, "r0", Indeterminate, ""),
			get("c1.1", 1, 20, 30, "r0", nil, ""),
			get("c1.2", 1, 40, 50, "r0", p("c0.1"), "e1"))), false},
		{"an indeterminate write lands before its server died", withBarrier(15, hist(false,
			ins("c0.1", 0, 0, 10, "r0", Indeterminate, ""),
			get("c1.1", 1, 20, 30, "r0", p("c0.1"), "e1"),
			get("c1.2", 1, 40, 50, "r0", p("c0.1"), "e1"))), true},
		{"an indeterminate write with If-Match lands before its version is replaced", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			w("c0.2", 0, 20, 30, Replace, "r0", "e1", *p("c0.2"), Indeterminate, ""),
			w("c1.1", 1, 25, 35, Replace, "r0", "*", *p("c1.1"), OK, "e2"),
			get("c2.1", 2, 40, 50, "r0", p("c1.1"), "e2"),
			get("c2.2", 2, 60, 70, "r0", p("c0.2"), "e3")), false},
		{"an indeterminate write seen once is seen after", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			w("c0.2", 0, 20, 30, Replace, "r0", "*", *p("c0.2"), Indeterminate, ""),
			get("c2.1", 2, 40, 50, "r0", p("c0.2"), "e2"),
			get("c2.2", 2, 60, 70, "r0", p("c0.1"), "e1")), false},
		{"operations of another partition do not interfere", hist(false,
			ins("c0.1", 0, 0, 10, "r0", OK, "e1"),
			Op{ID: "c1.1", Client: 1, Call: 20, Return: 30, Kind: Get, PartitionKey: "p1", RowKey: "r0", Outcome: NotFound}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Check(tc.h, time.Minute)
			if len(r.Problems) > 0 {
				t.Fatalf("problems: %v", r.Problems)
			}
			if got := r.Result == porcupine.Ok; got != tc.linearizable {
				t.Errorf("check: %v, want linearizable %v", r.Result, tc.linearizable)
			}
		})
	}
}

// TestETagsNameOneVersion checks that an ETag naming two versions of an
// entity, or a version answered with two ETags, is an anomaly, and that a
// batch's versions of different entities may share one.
func TestETagsNameOneVersion(t *testing.T) {
	for _, tc := range []struct {
		name     string
		h        *History
		problems int
	}{
		{"one ETag, two versions of an entity", hist(false,
			w("c0.1", 0, 0, 10, InsertOrReplace, "r0", "", *p("c0.1"), OK, "e1"),
			w("c1.1", 1, 20, 30, InsertOrReplace, "r0", "", *p("c1.1"), OK, "e1")), 1},
		{"one version, two ETags", hist(false,
			w("c0.1", 0, 0, 10, InsertOrReplace, "r0", "", *p("c0.1"), OK, "e1"),
			get("c1.1", 1, 20, 30, "r0", p("c0.1"), "e2")), 1},
		{"a batch's versions of two entities share one", hist(false,
			Op{ID: "c0.1", Call: 0, Return: 10, Kind: Batch, PartitionKey: "p0", Outcome: OK, ETags: []string{"e1", "e1"},
				Actions: []Action{{Kind: Insert, RowKey: "r0", Props: *p("c0.1.0")}, {Kind: Insert, RowKey: "r1", Props: *p("c0.1.1")}}}), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := Check(tc.h, time.Minute); len(r.Problems) != tc.problems {
				t.Errorf("problems %q, want %d", r.Problems, tc.problems)
			}
		})
	}
}

// TestShrinkKeepsTheEvidence checks that Shrink cuts a failing history to
// the failing partition, before the operations that came after the
// failure, and without the reads it does not need.
func TestShrinkKeepsTheEvidence(t *testing.T) {
	h := hist(false,
		w("c0.1", 0, 0, 10, Insert, "r0", "", *p("c0.1"), OK, "e1"),
		Op{ID: "c3.1", Client: 3, Call: 5, Return: 15, Kind: Get, PartitionKey: "p1", RowKey: "r0", Outcome: NotFound},
		get("c1.1", 1, 20, 30, "r1", nil, ""),
		get("c2.1", 2, 25, 35, "r0", nil, ""),
		w("c1.2", 1, 40, 50, Insert, "r2", "", *p("c1.2"), OK, "e2"),
		get("c2.2", 2, 60, 70, "r2", p("c1.2"), "e2"))
	if r := Check(h, time.Minute); r.Result != porcupine.Illegal {
		t.Fatalf("check: %v, want Illegal", r.Result)
	}
	short := Shrink(h, time.Minute)
	var ids []string
	for _, op := range short.Ops {
		ids = append(ids, op.ID)
	}
	if got := strings.Join(ids, " "); got != "c0.1 c2.1" {
		t.Errorf("shrunk to %q, want the insert and the read that missed it", got)
	}
	if r := Check(short, time.Minute); r.Result != porcupine.Illegal {
		t.Errorf("the shrunk history checks %v, want Illegal", r.Result)
	}
}
