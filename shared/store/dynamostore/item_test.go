package dynamostore

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

var testTime = time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)

func entityWith(pk, rk string, props map[string]edm.Value) *model.Entity {
	return &model.Entity{PartitionKey: pk, RowKey: rk, Timestamp: testTime, Properties: props}
}

// binaries returns n binary properties of size bytes each.
func binaries(n, size int) map[string]edm.Value {
	p := map[string]edm.Value{}
	for i := range n {
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(i + j)
		}
		p[fmt.Sprintf("Bin%02d", i)] = edm.NewBinary(b)
	}
	return p
}

func TestBuildItems(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		entity     *model.Entity
		wantChunks int // -1: single item
	}{
		{"NoProperties", entityWith("", "", nil), -1},
		{"Small", entityWith("p", "r", map[string]edm.Value{"A": edm.NewInt32(1), "Size": edm.NewString("x")}), -1},
		{"JustUnderOneItem", entityWith("p", "r", binaries(6, 64<<10)), -1},
		{"TwoItems", entityWith("p", "r", binaries(7, 64<<10)), 1},
		{"OneMiB", entityWith("p", "r", binaries(16, 64<<10)), 2},
		{"ManySmallOverOneItem", entityWith("p", "r", func() map[string]edm.Value {
			p := map[string]edm.Value{}
			for i := range 252 {
				p[fmt.Sprintf("P%03d", i)] = edm.NewString(strings.Repeat("s", 2000))
			}
			return p
		}()), 1},
		{"ThreeByteStrings", entityWith("p", "r", func() map[string]edm.Value {
			// 32K characters of 3 bytes: 96 KB of UTF-8 each, 64 KiB to Azure.
			p := map[string]edm.Value{}
			for i := range 15 {
				p[fmt.Sprintf("S%02d", i)] = edm.NewString(strings.Repeat("中", 32<<10))
			}
			return p
		}()), 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ei, err := buildItems(testLoc, c.entity)
			if err != nil {
				t.Fatalf("buildItems: %v", err)
			}
			gotChunks := -1
			if ei.chunked() {
				gotChunks = len(ei.chunks)
			}
			if gotChunks != c.wantChunks {
				t.Errorf("%d overflow items; want %d", gotChunks, c.wantChunks)
			}
			meta := metaOf(ei.main)
			if meta.chunks != gotChunks {
				t.Errorf("$chunks says %d; want %d", meta.chunks, gotChunks)
			}
			for i, it := range append([]item{ei.main}, ei.chunks...) {
				if size := itemSize(it); size > itemBudget {
					t.Errorf("item %d measures %d bytes, over the %d budget", i, size, itemBudget)
				}
				if i > 0 && stringAttr(it, attrGen) != meta.gen {
					t.Errorf("item %d has $gen %q; want %q", i, stringAttr(it, attrGen), meta.gen)
				}
				if i > 0 && stringAttr(it, attrRowKey) != chunkRowKey(encodeKey(c.entity.RowKey), i) {
					t.Errorf("item %d has RowKey %q", i, stringAttr(it, attrRowKey))
				}
			}
			count, hasCount := ei.main[attrCount].(*types.AttributeValueMemberN)
			switch {
			case ei.chunked() && hasCount:
				t.Error("a chunked entity carries $n")
			case !ei.chunked() && len(c.entity.Properties) == 0 && hasCount:
				t.Errorf("$n = %v on an entity without properties; want none", count.Value)
			case !ei.chunked() && len(c.entity.Properties) > 0 && (!hasCount || count.Value != strconv.Itoa(len(c.entity.Properties))):
				t.Errorf("$n = %v; want %d", count, len(c.entity.Properties))
			}
			back, err := decodeItems(testLoc, ei.main, ei.chunks)
			if err != nil {
				t.Fatalf("decodeItems: %v", err)
			}
			if back.PartitionKey != c.entity.PartitionKey || back.RowKey != c.entity.RowKey || !back.Timestamp.Equal(c.entity.Timestamp) {
				t.Errorf("keys or Timestamp changed: %q %q %v", back.PartitionKey, back.RowKey, back.Timestamp)
			}
			if len(back.Properties) != len(c.entity.Properties) {
				t.Fatalf("%d properties back; want %d", len(back.Properties), len(c.entity.Properties))
			}
			for name, v := range c.entity.Properties {
				if !back.Properties[name].Equal(v) {
					t.Errorf("property %q changed", name)
				}
			}
		})
	}
}

func TestBuildItemsErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		entity  *model.Entity
		wantIs  error
		wantMsg string
	}{
		{"PartitionKeyTooLong", entityWith(strings.Repeat("p", 2049), "r", nil), store.ErrKeyTooLong, ""},
		{"RowKeyTooLong", entityWith("p", strings.Repeat("r", 1025), nil), store.ErrKeyTooLong, ""},
		// An overflow item's RowKey is 2 bytes longer than its entity's.
		{"RowKeyTooLongToChunk", entityWith("p", strings.Repeat("r", 1023), binaries(7, 64<<10)), store.ErrKeyTooLong, ""},
		{"TooManyItems", entityWith("p", "r", binaries(70, 64<<10)), store.ErrEntityTooLarge, ""},
		{"ReservedName", entityWith("p", "r", map[string]edm.Value{"$names": edm.NewInt32(1)}), nil, "reserved"},
		{"SystemName", entityWith("p", "r", map[string]edm.Value{"Timestamp": edm.NewInt32(1)}), nil, "reserved"},
		{"InvalidValue", entityWith("p", "r", map[string]edm.Value{"A": {}}), nil, "cannot store"},
		{"ControlCharInKey", entityWith("p\x00", "r", nil), nil, "control character"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := buildItems(testLoc, c.entity)
			if err == nil {
				t.Fatal("buildItems succeeded; want an error")
			}
			if c.wantIs != nil && !errors.Is(err, c.wantIs) {
				t.Errorf("error %v; want %v", err, c.wantIs)
			}
			if c.wantMsg != "" && !strings.Contains(err.Error(), c.wantMsg) {
				t.Errorf("error %v; want it to mention %q", err, c.wantMsg)
			}
		})
	}
	t.Run("RowKeyAtLimitSingleItem", func(t *testing.T) {
		if _, err := buildItems(testLoc, entityWith("p", strings.Repeat("r", 1024), nil)); err != nil {
			t.Errorf("a 1024-byte RowKey on a one-item entity: %v", err)
		}
	})
}

func TestDecodeItemsErrors(t *testing.T) {
	t.Parallel()
	good, err := buildItems(testLoc, entityWith("p", "r", map[string]edm.Value{"A": edm.NewInt32(1)}))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		mutate func(item)
	}{
		{"NoKeys", func(it item) { delete(it, attrPartitionKey) }},
		{"NoTimestamp", func(it item) { delete(it, attrTimestamp) }},
		{"BadTimestamp", func(it item) { it[attrTimestamp] = str("yesterday") }},
		{"ForeignValue", func(it item) { it["A"] = &types.AttributeValueMemberNULL{Value: true} }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			it := item{}
			for k, v := range good.main {
				it[k] = v
			}
			c.mutate(it)
			if _, err := decodeItems(testLoc, it, nil); !errors.Is(err, errCorrupt) {
				t.Errorf("decodeItems = %v; want errCorrupt", err)
			}
		})
	}
}

// TestEntitySize pins model.EntitySize, on which mergeAction's reasoning
// about the 1 MiB limit rests.
func TestEntitySize(t *testing.T) {
	t.Parallel()
	e := entityWith("pk", "rk", map[string]edm.Value{
		"S": edm.NewString("héllo"),   // 8+2 + 4+10
		"B": edm.NewBinary([]byte{1}), // 8+2 + 4+1
		"G": edm.NewGuid("00000000-0000-0000-0000-000000000000"),
		"D": edm.NewDateTime(testTime), // 8+2 + 8
		"F": edm.NewDouble(1),          // 8+2 + 8
		"I": edm.NewInt32(1),           // 8+2 + 4
		"L": edm.NewInt64(1),           // 8+2 + 8
		"T": edm.NewBoolean(true),      // 8+2 + 1
		"😀": edm.NewInt32(1),           // 8+4 + 4 (a surrogate pair)
	})
	want := 4 + 2*4 + (10 + 14) + (10 + 5) + (10 + 16) + (10 + 8) + (10 + 8) + (10 + 4) + (10 + 8) + (10 + 1) + (12 + 4)
	if got := model.EntitySize(e); got != want {
		t.Errorf("model.EntitySize = %d; want %d", got, want)
	}
}

func TestCheckTransaction(t *testing.T) {
	t.Parallel()
	var plans []*plan
	var ops []store.Op
	for i := range 5 {
		// 5 entities of ~1 MiB: 20 actions, about 5 MB.
		e := entityWith("p", fmt.Sprint("r", i), binaries(16, 60<<10))
		ops = append(ops, store.Op{Kind: store.OpInsert, Entity: e})
		p, err := newPlan(testLoc, i, ops[i])
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, p)
	}
	actions, owners := buildActions(testLoc, plans)
	err := checkTransaction(actions, owners, plans)
	var opErr *store.OpError
	if !errors.As(err, &opErr) || opErr.Index != 4 || !errors.Is(err, store.ErrEntityTooLarge) {
		t.Errorf("checkTransaction(5 × 1 MiB) = %v; want OpError at 4 wrapping ErrEntityTooLarge", err)
	}
	if err := checkTransaction(actions[:8], owners[:8], plans); err != nil {
		t.Errorf("checkTransaction(2 × 1 MiB) = %v; want nil", err)
	}
	many := make([]types.TransactWriteItem, 101)
	manyOwners := make([]int, 101)
	for i := range manyOwners {
		manyOwners[i] = i / 2
		many[i] = types.TransactWriteItem{Delete: &types.Delete{}}
	}
	if err := checkTransaction(many, manyOwners, nil); !errors.As(err, &opErr) || opErr.Index != 50 {
		t.Errorf("checkTransaction(101 actions) = %v; want OpError at 50", err)
	}
}
