package model

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
)

func TestValueSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    edm.Value
		want int
	}{
		{"string ASCII", edm.NewString("abc"), 2*3 + 4},
		{"string empty", edm.NewString(""), 4},
		{"string supplementary", edm.NewString("😀"), 2*2 + 4},
		{"binary", edm.NewBinary(make([]byte, 10)), 10 + 4},
		{"binary empty", edm.NewBinary(nil), 4},
		{"datetime", edm.NewDateTime(time.Now()), 8},
		{"double", edm.NewDouble(1), 8},
		{"int64", edm.NewInt64(1), 8},
		{"int32", edm.NewInt32(1), 4},
		{"guid", edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"), 16},
		{"boolean", edm.NewBoolean(true), 1},
		{"no type", edm.Value{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ValueSize(tc.v); got != tc.want {
				t.Fatalf("ValueSize = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestEntitySize(t *testing.T) {
	t.Parallel()
	e := &Entity{
		PartitionKey: "pk",
		RowKey:       "😀",
		Properties: map[string]edm.Value{
			"Name": edm.NewString("Ada"),
			"Age":  edm.NewInt32(36),
		},
	}
	want := 4 + 2*(2+2) + // overhead and keys
		(8 + 2*4 + 2*3 + 4) + // Name
		(8 + 2*3 + 4) // Age
	if got := EntitySize(e); got != want {
		t.Fatalf("EntitySize = %d, want %d", got, want)
	}
	if got := EntitySize(&Entity{}); got != 4 {
		t.Fatalf("EntitySize(empty) = %d, want 4", got)
	}
}

func TestValidateValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    edm.Value
		code apierr.Code
	}{
		{"string at limit", edm.NewString(strings.Repeat("a", MaxStringLength)), ""},
		{"string over limit", edm.NewString(strings.Repeat("a", MaxStringLength+1)), apierr.PropertyValueTooLarge},
		{"multibyte string at limit", edm.NewString(strings.Repeat("é", MaxStringLength)), ""},
		{"supplementary string at limit", edm.NewString(strings.Repeat("😀", MaxStringLength/2)), ""},
		{"supplementary string over limit", edm.NewString(strings.Repeat("😀", MaxStringLength/2) + "a"), apierr.PropertyValueTooLarge},
		{"string invalid UTF-8", edm.NewString("a\xff"), apierr.InvalidInput},
		{"binary at limit", edm.NewBinary(make([]byte, MaxBinaryLength)), ""},
		{"binary over limit", edm.NewBinary(make([]byte, MaxBinaryLength+1)), apierr.PropertyValueTooLarge},
		{"datetime first", edm.NewDateTime(edm.MinDateTime), ""},
		{"datetime last", edm.NewDateTime(edm.MaxDateTime), ""},
		{"datetime before", edm.NewDateTime(edm.MinDateTime.Add(-100 * time.Nanosecond)), apierr.OutOfRangeInput},
		{"datetime after", edm.NewDateTime(edm.MaxDateTime.Add(100 * time.Nanosecond)), apierr.OutOfRangeInput},
		{"zero time", edm.Value{Type: edm.DateTime}, apierr.OutOfRangeInput},
		{"guid canonical", edm.NewGuid("c9da6455-213d-42c9-9a79-3e9149a57833"), ""},
		{"guid upper case", edm.NewGuid("C9DA6455-213D-42C9-9A79-3E9149A57833"), apierr.InvalidInput},
		{"guid malformed", edm.NewGuid("nope"), apierr.InvalidInput},
		{"int32 extremes", edm.NewInt32(math.MinInt32), ""},
		{"int32 out of range", edm.Value{Type: edm.Int32, Int: math.MaxInt32 + 1}, apierr.InvalidInput},
		{"int64", edm.NewInt64(math.MinInt64), ""},
		{"double NaN", edm.NewDouble(math.NaN()), ""},
		{"boolean", edm.NewBoolean(false), ""},
		{"no type", edm.Value{}, apierr.InvalidInput},
		{"unknown type", edm.Value{Type: 99}, apierr.InvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, ValidateValue("P", tc.v), tc.code)
		})
	}
}

// entityOfSize builds an entity whose EntitySize is exactly size, from
// binary properties of at most 64 KiB.
func entityOfSize(t *testing.T, pk, rk string, size int) *Entity {
	t.Helper()
	e := &Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]edm.Value{}}
	left := size - EntitySize(e)
	for i := 0; left > 0; i++ {
		name := fmt.Sprintf("b%02d", i)
		overhead := 8 + 2*len(name) + 4
		n := min(left-overhead, MaxBinaryLength)
		if n < 0 {
			t.Fatalf("cannot fill %d bytes exactly", left)
		}
		e.Properties[name] = edm.NewBinary(make([]byte, n))
		left -= overhead + n
	}
	if got := EntitySize(e); got != size {
		t.Fatalf("built entity of size %d, want %d", got, size)
	}
	return e
}

func TestValidateEntity(t *testing.T) {
	t.Parallel()
	props := func(n int) map[string]edm.Value {
		m := make(map[string]edm.Value, n)
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("p%d", i)] = edm.NewInt32(int32(i))
		}
		return m
	}
	tests := []struct {
		name string
		e    *Entity
		code apierr.Code
	}{
		{"minimal", &Entity{}, ""},
		{"typical", &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]edm.Value{"Name": edm.NewString("x")}}, ""},
		{"max properties", &Entity{Properties: props(MaxProperties)}, ""},
		{"too many properties", &Entity{Properties: props(MaxProperties + 1)}, apierr.TooManyProperties},
		{"size at limit", entityOfSize(t, "p", "r", MaxEntitySize), ""},
		{"size over limit", entityOfSize(t, "p", "r", MaxEntitySize+1), apierr.EntityTooLarge},
		{"long keys count in size", entityOfSize(t, strings.Repeat("k", 1024), strings.Repeat("😀", 512), MaxEntitySize+1), apierr.EntityTooLarge},
		{"bad partition key", &Entity{PartitionKey: "a/b"}, apierr.InvalidInput},
		{"bad row key", &Entity{RowKey: "a#b"}, apierr.InvalidInput},
		{"long row key", &Entity{RowKey: strings.Repeat("r", 1025)}, codeKeyValueTooLarge},
		{"bad property name", &Entity{Properties: map[string]edm.Value{"a-b": edm.NewInt32(1)}}, apierr.PropertyNameInvalid},
		{"long property name", &Entity{Properties: map[string]edm.Value{strings.Repeat("a", 256): edm.NewInt32(1)}}, apierr.PropertyNameTooLong},
		{"system name as property", &Entity{Properties: map[string]edm.Value{"Timestamp": edm.NewDateTime(time.Now())}}, apierr.PropertyNameInvalid},
		{"PartitionKey as property", &Entity{Properties: map[string]edm.Value{"PartitionKey": edm.NewString("p")}}, apierr.PropertyNameInvalid},
		{"big value", &Entity{Properties: map[string]edm.Value{"S": edm.NewString(strings.Repeat("s", MaxStringLength+1))}}, apierr.PropertyValueTooLarge},
		{"keys are checked before properties", &Entity{PartitionKey: "?", Properties: map[string]edm.Value{"a-b": edm.NewInt32(1)}}, apierr.InvalidInput},
		{"properties are checked before the count", &Entity{Properties: func() map[string]edm.Value {
			m := props(MaxProperties + 1)
			m["bad-name"] = edm.NewInt32(0)
			return m
		}()}, apierr.PropertyNameInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, ValidateEntity(tc.e), tc.code)
		})
	}
}

// TestValidateEntityReportsFirstName shows that the error does not depend
// on map iteration order.
func TestValidateEntityReportsFirstName(t *testing.T) {
	t.Parallel()
	e := &Entity{Properties: map[string]edm.Value{}}
	for i := 0; i < 50; i++ {
		e.Properties[fmt.Sprintf("bad-%02d", i)] = edm.NewInt32(0)
	}
	for i := 0; i < 20; i++ {
		err := ValidateEntity(e)
		if err == nil || !strings.Contains(err.Error(), `"bad-00"`) {
			t.Fatalf("error = %v, want the one for bad-00", err)
		}
	}
}

// TestValidateBatchSize: 100 operations pass and the 101st is Azure's 400
// InvalidInput with its documented wording, which the codec and the service
// both answer.
func TestValidateBatchSize(t *testing.T) {
	for _, n := range []int{0, 1, MaxBatchOperations} {
		if err := ValidateBatchSize(n); err != nil {
			t.Errorf("%d operations: %v", n, err)
		}
	}
	err := ValidateBatchSize(MaxBatchOperations + 1)
	ae, ok := apierr.As(err)
	if !ok || ae.Code != apierr.InvalidInput || ae.Message != "The batch request operation exceeds the maximum 100 changes per change set." {
		t.Errorf("%d operations: %#v", MaxBatchOperations+1, err)
	}
}
