package filter

import (
	"math"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

func sampleEntity() *model.Entity {
	return &model.Entity{
		PartitionKey: "pk1",
		RowKey:       "rk1",
		Timestamp:    time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC),
		Properties: map[string]edm.Value{
			"Name":      edm.NewString("Alice"),
			"Quote":     edm.NewString("it's"),
			"Unicode":   edm.NewString("日本語"),
			"Empty":     edm.NewString(""),
			"Age":       edm.NewInt32(30),
			"Small64":   edm.NewInt64(30),
			"Big":       edm.NewInt64(3000000000),
			"Price":     edm.NewDouble(100.25),
			"Whole":     edm.NewDouble(30),
			"NaNVal":    edm.NewDouble(math.NaN()),
			"IsActive":  edm.NewBoolean(true),
			"IsDeleted": edm.NewBoolean(false),
			"Born":      edm.NewDateTime(time.Date(1990, 5, 6, 7, 8, 9, 123456700, time.UTC)),
			"ID":        edm.NewGuid("0f8fad5b-d9cb-469f-a165-70867728950e"),
			"Blob":      edm.NewBinary([]byte{0x0a, 0xff}),
		},
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		filter string
		want   bool
	}{
		{"empty filter", "", true},

		// OData v3: Boolean literals are conditions on their own.
		{"true", "true", true},
		{"false", "false", false},
		{"not true", "not true", false},
		{"not false", "not false", true},
		{"true and a match", "true and PartitionKey eq 'pk1'", true},
		{"false or a match", "false or PartitionKey eq 'pk1'", true},
		{"false and a match", "false and PartitionKey eq 'pk1'", false},
		{"literal comparison true", "1 lt 2 and PartitionKey eq 'pk1'", true},
		{"literal comparison false", "'b' lt 'a' or PartitionKey eq 'pk2'", false},

		// System properties come from the entity's fields.
		{"partition key", "PartitionKey eq 'pk1'", true},
		{"partition key differs", "PartitionKey eq 'pk2'", false},
		{"partition key ne", "PartitionKey ne 'pk2'", true},
		{"row key range", "RowKey ge 'rk' and RowKey lt 'rl'", true},
		{"flipped key comparison", "'pk0' lt PartitionKey", true},
		{"flipped key comparison fails", "'pk1' lt PartitionKey", false},
		{"keys are case-sensitive", "PartitionKey eq 'PK1'", false},
		{"partition key against an int", "PartitionKey eq 1", false},
		{"partition key ne an int is still false", "PartitionKey ne 1", false},
		{"timestamp", "Timestamp ge datetime'2024-06-01T12:00:00Z' and Timestamp lt datetime'2024-06-01T12:00:01Z'", true},
		{"timestamp before", "Timestamp lt datetime'2024-01-01T00:00:00Z'", false},
		{"timestamp against a string", "Timestamp gt '2000'", false},
		{"system names are case-sensitive", "partitionKey eq 'pk1'", false},

		// Strings.
		{"string eq", "Name eq 'Alice'", true},
		{"string case-sensitive", "Name eq 'alice'", false},
		{"string prefix match", "Name ge 'A' and Name lt 'B'", true},
		{"escaped quote", "Quote eq 'it''s'", true},
		{"unicode string", "Unicode eq '日本語'", true},
		{"unicode sorts after ascii", "Unicode gt 'zzz'", true},
		{"empty string", "Empty eq ''", true},
		{"empty string sorts first", "Empty lt 'a'", true},

		// Numbers: strictly typed.
		{"int32", "Age eq 30", true},
		{"int32 gt", "Age gt 29", true},
		{"int32 flipped", "31 gt Age", true},
		{"int32 property int64 literal", "Age eq 30L", false},
		{"int32 property int64 literal ne", "Age ne 31L", false},
		{"int32 property double literal", "Age eq 30.0", false},
		{"int64", "Big eq 3000000000L", true},
		{"int64 property int32 literal", "Small64 eq 30", false},
		{"int64 property int32 literal gt", "Big gt 1", false},
		{"int64 small", "Small64 eq 30L", true},
		{"double", "Price le 100.25", true},
		{"double gt", "Price gt 100.0", true},
		{"double property int32 literal", "Price gt 100", false},
		{"integral double", "Whole eq 30.0", true},
		{"integral double by suffix", "Whole eq 30D", true},
		{"integral double int32 literal", "Whole eq 30", false},
		{"double below infinity", "Price lt INF", true},
		{"double above minus infinity", "Price gt -INF", true},
		{"NaN eq NaN", "NaNVal eq NaN", false},
		{"NaN ne NaN", "NaNVal ne NaN", false},
		{"NaN ne a number", "NaNVal ne 1.0", false},
		{"not NaN eq", "not (NaNVal eq 1.0)", true},

		// Booleans, bare and compared.
		{"bare true property", "IsActive", true},
		{"not bare true property", "not IsActive", false},
		{"bare false property", "IsDeleted", false},
		{"not bare false property", "not IsDeleted", true},
		{"boolean eq false", "IsDeleted eq false", true},
		{"boolean order", "IsActive gt false", true},
		{"bare string property", "Name", false},
		{"not bare string property", "not Name", true},

		// Missing properties never compare, ne included; not negates that.
		{"missing eq", "Missing eq 1", false},
		{"missing ne", "Missing ne 1", false},
		{"missing lt empty string", "Missing lt ''", false},
		{"missing gt empty string", "Missing gt ''", false},
		{"not missing eq", "not (Missing eq 1)", true},
		{"not missing bare", "not Missing", true},
		{"missing bare", "Missing", false},

		// DateTime, Guid, Binary.
		{"datetime", "Born eq datetime'1990-05-06T07:08:09.1234567Z'", true},
		{"datetime with offset", "Born eq datetime'1990-05-06T09:08:09.1234567+02:00'", true},
		{"datetime date only", "Born gt datetime'1990-05-06'", true},
		{"datetime as a string", "Born eq '1990-05-06T07:08:09.1234567Z'", false},
		{"guid", "ID eq guid'0F8FAD5B-D9CB-469F-A165-70867728950E'", true},
		{"guid as a string", "ID eq '0f8fad5b-d9cb-469f-a165-70867728950e'", false},
		{"binary", "Blob eq X'0aff'", true},
		{"binary prefix", "Blob eq binary'0AFF'", true},
		{"binary order", "Blob gt X'0a'", true},
		{"binary as a string", "Blob eq '0aff'", false},

		// Logic.
		{"and false", "PartitionKey eq 'pk1' and Age gt 40", false},
		{"and true", "PartitionKey eq 'pk1' and Age gt 20", true},
		{"or", "PartitionKey eq 'x' or Age gt 20", true},
		{"or false", "PartitionKey eq 'x' or Age gt 40", false},
		{"not and", "not (PartitionKey eq 'pk1' and Age eq 30)", false},
		{"not binds to the comparison", "not Age eq 31 and IsActive", true},
		{"precedence", "PartitionKey eq 'x' and Age eq 1 or IsActive", true},
		{"parentheses change it", "PartitionKey eq 'x' and (Age eq 1 or IsActive)", false},
	}
	e := sampleEntity()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.filter)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.filter, err)
			}
			if got := f.Match(e); got != tt.want {
				t.Errorf("Parse(%q).Match = %v, want %v (AST %s)", tt.filter, got, tt.want, f)
			}
		})
	}
}

// Query Tables filters on TableName; the service evaluates it over an
// entity holding TableName as a String property.
func TestMatchTableName(t *testing.T) {
	t.Parallel()
	table := &model.Entity{Properties: map[string]edm.Value{"TableName": edm.NewString("mytable")}}
	tests := []struct {
		name   string
		filter string
		want   bool
	}{
		{"equal", "TableName eq 'mytable'", true},
		{"case differs", "TableName eq 'MyTable'", false},
		{"prefix range", "TableName ge 'my' and TableName lt 'mz'", true},
		{"outside range", "TableName gt 'n'", false},
		{"not equal", "TableName ne 'other'", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Parse(tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Match(table); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatchEdgeEntities(t *testing.T) {
	t.Parallel()
	f, err := Parse("Age eq 1")
	if err != nil {
		t.Fatal(err)
	}
	if f.Match(nil) {
		t.Error("a nil entity matched")
	}
	if f.Match(&model.Entity{}) {
		t.Error("an entity without properties matched")
	}
	var none *Filter
	if !none.Match(&model.Entity{}) {
		t.Error("a nil filter did not match")
	}
	if (&Filter{}).Match(nil) {
		t.Error("the empty filter matched a nil entity")
	}
}
