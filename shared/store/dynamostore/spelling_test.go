package dynamostore

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

// attrNames lists an item's attribute names, sorted.
func attrNames(it item) []string {
	return slices.Sorted(maps.Keys(it))
}

// TestMergeMovesTypedSpelling merges values of other types over each
// property, both ways between the plain and the typed name, and checks that
// the stored item keeps exactly one spelling per property, with $n bounding
// the property count.
func TestMergeMovesTypedSpelling(t *testing.T) {
	t.Parallel()
	env := newEnv(t, newTestStore(t))
	dt := time.Date(2024, 5, 1, 12, 34, 56, 123456700, time.UTC)
	typedFirst := props{
		"A": edm.NewInt64(1), "B": edm.NewDateTime(dt), "C": edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"),
		"D": edm.NewDouble(3), "E": edm.NewDouble(math.NaN()), "F": edm.NewString("plain"),
	}
	plainFirst := props{
		"A": edm.NewInt32(1), "B": edm.NewString("2024-05-01T12:34:56.1234567Z"), "C": edm.NewString("c9da6455-213d-42c9-9a79-3e9149a57833"),
		"D": edm.NewDouble(3.5), "E": edm.NewBinary([]byte("NaN")), "F": edm.NewInt64(7),
	}
	e := newEntity("spell", "e", typedFirst)
	env.insert(e)
	wantAttrs := func(want ...string) {
		t.Helper()
		items := env.rawItems("spell")
		if len(items) != 1 {
			t.Fatalf("%d items; want 1", len(items))
		}
		got := attrNames(items[0])
		want = append(want, attrPartitionKey, attrRowKey, attrTimestamp, attrCount, attrShard, attrOrder)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("stored attributes %q; want %q", got, want)
		}
	}
	wantAttrs("A@", "B@", "C@", "D@", "E@", "F")
	env.wantStored(e)

	for round, patch := range []props{plainFirst, typedFirst, plainFirst} {
		merge := newEntity("spell", "e", patch)
		env.mustWrite(store.Op{Kind: store.OpMerge, Entity: merge, Cond: store.CondExists})
		env.wantStored(merge)
		if round%2 == 0 {
			wantAttrs("A", "B", "C", "D", "E", "F@")
		} else {
			wantAttrs("A@", "B@", "C@", "D@", "E@", "F")
		}
	}
}

// TestStoredTwiceIsCorrupt: an item holding a property under both names
// (written by another tool) is refused rather than read either way.
func TestStoredTwiceIsCorrupt(t *testing.T) {
	t.Parallel()
	it := keyItem("p", "r")
	it[attrTimestamp] = str(formatTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)))
	it["A"] = &types.AttributeValueMemberN{Value: "1"}
	it["A@"] = &types.AttributeValueMemberN{Value: "1"}
	if e, err := decodeItems(testLoc, it, nil); err == nil || !strings.Contains(err.Error(), "both of its names") {
		t.Errorf("decodeItems = %v, %v; want a corrupt-item error", e, err)
	}
}

// TestMergeCountBoundDrift: $n counts every sent property, so merging the
// same properties again raises it past the real count; near 252 the fast
// UpdateItem is turned away and the merge is redone exactly from ALL_OLD
// (one more request, no read), which resets $n.
func TestMergeCountBoundDrift(t *testing.T) {
	t.Parallel()
	counter := newCallCounter()
	env := newEnv(t, newTestStore(t, counter.option))
	p := make(props, 250)
	for i := range 250 {
		p[fmt.Sprintf("P%03d", i)] = edm.NewInt32(int32(i))
	}
	e := newEntity("drift", "e", p)
	env.insert(e)
	want := e.Clone()
	count := func() string {
		t.Helper()
		return env.rawItems("drift")[0][attrCount].(*types.AttributeValueMemberN).Value
	}
	steps := []struct {
		name      string
		wantCalls map[string]int
		wantCount string
	}{
		{"FitsTheBound", map[string]int{"UpdateItem": 1}, "252"},
		{"BoundTooHigh", map[string]int{"UpdateItem": 1, "PutItem": 1}, "250"},
		{"FitsAgain", map[string]int{"UpdateItem": 1}, "252"},
	}
	for i, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			patch := newEntity("drift", "e", props{"P000": edm.NewInt32(int32(-i)), "P001": edm.NewString(st.name)})
			counter.take()
			env.mustWrite(store.Op{Kind: store.OpMerge, Entity: patch, Cond: store.CondExists})
			if got := counter.take(); !maps.Equal(got, st.wantCalls) {
				t.Errorf("DynamoDB calls %v; want %v", got, st.wantCalls)
			}
			maps.Copy(want.Properties, patch.Properties)
			want.Timestamp = patch.Timestamp
			env.wantStored(want)
			if got := count(); got != st.wantCount {
				t.Errorf("$n = %s; want %s", got, st.wantCount)
			}
		})
	}
}

// TestMergeOf252Properties: the widest merge Azure allows fits one
// UpdateItem, its expression (a SET and a REMOVE per property) inside
// DynamoDB's 4 KB. Sent again over the same entity, $n counts every
// property twice, so the fast UpdateItem is turned away and the merge is
// redone as a PutItem from ALL_OLD: two requests, the same result.
func TestMergeOf252Properties(t *testing.T) {
	t.Parallel()
	counter := newCallCounter()
	env := newEnv(t, newTestStore(t, counter.option))
	env.insert(newEntity("wide", "e", nil))
	steps := []struct {
		typed bool
		want  map[string]int
	}{
		{false, map[string]int{"UpdateItem": 1}},
		{true, map[string]int{"UpdateItem": 1, "PutItem": 1}},
	}
	for round, st := range steps {
		p := make(props, maxCustomProperties)
		for i := range maxCustomProperties {
			v := edm.NewInt32(int32(i))
			if st.typed {
				v = edm.NewInt64(int64(i))
			}
			p[fmt.Sprintf("Property%03d", i)] = v
		}
		merge := newEntity("wide", "e", p)
		counter.take()
		env.mustWrite(store.Op{Kind: store.OpMerge, Entity: merge, Cond: store.CondExists})
		if got := counter.take(); !maps.Equal(got, st.want) {
			t.Errorf("round %d: DynamoDB calls %v; want %v", round, got, st.want)
		}
		env.wantStored(merge)
	}
}
