package dynamoproxy

import (
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock the test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestBucketsRefill: a bucket starts with its burst, admits while it holds
// more than zero units, goes below zero when charged after the fact, and
// refills at its rate up to the burst.
func TestBucketsRefill(t *testing.T) {
	t.Parallel()
	clock := newFakeClock()
	b := &buckets{capacity: Capacity{ReadUnits: 10, WriteUnits: 4, Burst: 2 * time.Second}, clock: clock}
	w := bucketID{key: Key{Table: "t", Hash: "a"}, write: true}
	r := bucketID{key: Key{Table: "t", Hash: "a"}}
	empty := func(id bucketID) bool { return len(b.empty([]bucketID{id})) == 1 }

	if empty(w) {
		t.Fatal("a new bucket is empty; want it full (burst 8 units)")
	}
	b.take(w, 8)
	if !empty(w) {
		t.Fatal("bucket not empty after taking its burst")
	}
	if empty(r) {
		t.Fatal("reads share the write bucket")
	}
	clock.Advance(250 * time.Millisecond) // +1 unit
	if empty(w) {
		t.Fatal("no refill after 250 ms at 4 units/s")
	}
	b.take(w, 5) // 1 - 5 = -4: charged after the answer, with the true size
	clock.Advance(time.Second)
	if !empty(w) {
		t.Fatal("a bucket at -4 admits after 1 s at 4 units/s; want it to wait until it is above 0")
	}
	clock.Advance(300 * time.Millisecond)
	if empty(w) {
		t.Fatal("still empty 1.3 s after going to -4 at 4 units/s")
	}
	clock.Advance(time.Hour)
	b.take(w, 8)
	if !empty(w) {
		t.Fatal("refill went past the burst")
	}
	unlimited := &buckets{clock: clock}
	unlimited.take(w, 1e9)
	if len(unlimited.empty([]bucketID{w, r})) != 0 {
		t.Fatal("zero Capacity throttles")
	}
}

// TestItemSize follows "DynamoDB item sizes and formats": names and values
// by UTF-8 length, numbers by significant digits, binaries raw, lists and
// maps 3 bytes plus one per element.
func TestItemSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		item string
		want int
	}{
		{`{"pk":{"S":"abc"}}`, 2 + 3},
		{`{"é":{"S":"é"}}`, 2 + 2},
		{`{"n":{"N":"12345"}}`, 1 + 3 + 1},
		{`{"n":{"N":"-0.00120"}}`, 1 + 1 + 1},
		{`{"n":{"N":"1000"}}`, 1 + 1 + 1},
		{`{"n":{"N":"1.5E+10"}}`, 1 + 1 + 1},
		{`{"b":{"B":"AAECAw=="}}`, 1 + 4},
		{`{"t":{"BOOL":true},"z":{"NULL":true}}`, 1 + 1 + 1 + 1},
		{`{"l":{"L":[{"S":"ab"},{"N":"1"}]}}`, 1 + 3 + (2 + 1) + (2 + 1)},
		{`{"m":{"M":{"k":{"S":"v"}}}}`, 1 + 3 + (1 + 1 + 1)},
		{`{"s":{"SS":["a","bc"]}}`, 1 + 3},
	} {
		var it attrs
		if err := json.Unmarshal([]byte(c.item), &it); err != nil {
			t.Fatal(err)
		}
		if got := itemSize(it); got != c.want {
			t.Errorf("itemSize(%s) = %d; want %d", c.item, got, c.want)
		}
	}
	for _, c := range []struct {
		size        int
		read, write float64
	}{{0, 1, 1}, {1024, 1, 1}, {1025, 1, 2}, {4096, 1, 4}, {4097, 2, 5}} {
		if r, w := readUnitsOf(c.size), writeUnitsOf(c.size); r != c.read || w != c.write {
			t.Errorf("units of %d bytes = %v read, %v write; want %v, %v", c.size, r, w, c.read, c.write)
		}
	}
}

// TestExpressions: the partition key value of a key condition, whether an
// update names an index key.
func TestExpressions(t *testing.T) {
	t.Parallel()
	in := func(s string) object {
		o, ok := decodeObject([]byte(s))
		if !ok {
			t.Fatalf("bad JSON %s", s)
		}
		return o
	}
	for _, c := range []struct{ req, want string }{
		{`{"KeyConditionExpression":"#p = :p AND #r > :r","ExpressionAttributeNames":{"#p":"pk","#r":"rk"},"ExpressionAttributeValues":{":p":{"S":"a"},":r":{"S":"x"}}}`, "a"},
		{`{"KeyConditionExpression":"(:v=pk) and begins_with(rk, :r)","ExpressionAttributeValues":{":v":{"N":"7"},":r":{"S":"x"}}}`, "7"},
		{`{"KeyConditionExpression":"rk = :r AND pk = :p","ExpressionAttributeValues":{":p":{"S":"b"},":r":{"S":"x"}}}`, "b"},
		{`{"KeyConditions":{"pk":{"AttributeValueList":[{"S":"c"}],"ComparisonOperator":"EQ"}}}`, "c"},
		{`{"KeyConditionExpression":"other = :p","ExpressionAttributeValues":{":p":{"S":"b"}}}`, ""},
	} {
		if got := queryHash(in(c.req), "pk"); got != c.want {
			t.Errorf("queryHash(%s) = %q; want %q", c.req, got, c.want)
		}
	}
	tbl := &tableSchema{hash: "pk", rng: "rk", indexes: []indexSchema{{name: "ix", hash: "$s", rng: "g"}}}
	for _, c := range []struct {
		req  string
		want bool
	}{
		{`{"UpdateExpression":"SET #a = :a","ExpressionAttributeNames":{"#a":"data"}}`, false},
		{`{"UpdateExpression":"SET #a = :a","ExpressionAttributeNames":{"#a":"$s"}}`, true},
		{`{"UpdateExpression":"REMOVE g"}`, true},
		{`{"UpdateExpression":"SET x = :g"}`, false},
		{`{"AttributeUpdates":{"g":{"Action":"DELETE"}}}`, true},
	} {
		if got := namesIndexKey(in(c.req), tbl); got != c.want {
			t.Errorf("namesIndexKey(%s) = %t; want %t", c.req, got, c.want)
		}
	}
}

// TestStatsHottest: the hottest key and its share of the requests, over a
// window taken with Since.
func TestStatsHottest(t *testing.T) {
	t.Parallel()
	a, b, scan := Key{Table: "t", Hash: "a"}, Key{Table: "t", Index: "ix", Hash: "b"}, Key{Table: "t"}
	before := Stats{Requests: 10, Ops: map[string]int64{"GetItem": 10}, Keys: map[Key]Usage{a: {Requests: 10, ReadUnits: 5}}}
	after := Stats{Requests: 30, Ops: map[string]int64{"GetItem": 20, "PutItem": 10},
		Keys: map[Key]Usage{a: {Requests: 15, ReadUnits: 7.5}, b: {Requests: 12, WriteUnits: 12, Throttles: 2}, scan: {Requests: 1}}}
	w := after.Since(before)
	if w.Requests != 20 || w.Ops["GetItem"] != 10 || w.Ops["PutItem"] != 10 {
		t.Fatalf("Since = %+v", w)
	}
	k, u, share := w.Hottest()
	if k != b || u.Requests != 12 || u.Throttles != 2 || share != 0.6 {
		t.Fatalf("Hottest = %v %+v %v; want %v with 12 of 20 requests", k, u, share, b)
	}
	if got := []string{a.String(), b.String(), scan.String()}; !slices.Equal(got, []string{"t[a]", "t/ix[b]", "t (scan)"}) {
		t.Errorf("Key strings = %q", got)
	}
	if _, _, share := (Stats{}).Hottest(); share != 0 {
		t.Errorf("share of no requests = %v", share)
	}
}

// TestRandomFaults: the same seed gives the same choices; writes-only and
// conflict-only faults never go to requests that cannot take them.
func TestRandomFaults(t *testing.T) {
	t.Parallel()
	rates := FaultRates{Throttle: 0.1, LoseAnswer: 0.1, InFlight: 0.2, Conflict: 0.2, Slow: 0.1, Delay: time.Millisecond}
	p1, p2, p3 := RandomFaults(7, rates), RandomFaults(7, rates), RandomFaults(8, rates)
	read := Request{Op: "Query"}
	write := Request{Op: "PutItem", Write: true}
	var s1, s3 []Fault
	counts := map[FaultKind]int{}
	for i := range 2000 {
		r := read
		if i%2 == 1 {
			r = write
		}
		f1, f2 := p1(r), p2(r)
		if f1 != f2 {
			t.Fatalf("request %d: same seed chose %+v and %+v", i, f1, f2)
		}
		if !r.Write && (f1.Kind == InFlight || f1.Kind == Conflict) {
			t.Fatalf("a Query got %s", f1.Kind)
		}
		if f1.Kind != "" && f1.Delay != time.Millisecond {
			t.Fatalf("fault %+v without the configured delay", f1)
		}
		counts[f1.Kind]++
		s1, s3 = append(s1, f1), append(s3, p3(r))
	}
	if slices.Equal(s1, s3) {
		t.Error("seeds 7 and 8 chose the same 2000 faults")
	}
	for _, k := range []FaultKind{Throttle, LoseAnswer, InFlight, Conflict, Slow, ""} {
		if counts[k] == 0 {
			t.Errorf("no %q in 2000 draws: %v", k, counts)
		}
	}
}

// TestHeaders: the namespace DynamoDB Local keys its databases by, and the
// SDK's attempt number.
func TestHeaders(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	h.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=00")
	h.Set("Amz-Sdk-Request", "attempt=2; max=3")
	if ns, n := namespace(h), attempt(h); ns != "AKID/us-east-1" || n != 2 {
		t.Errorf("namespace, attempt = %q, %d; want AKID/us-east-1, 2", ns, n)
	}
	if ns, n := namespace(http.Header{}), attempt(http.Header{}); ns != "" || n != 0 {
		t.Errorf("without headers: %q, %d", ns, n)
	}
}
