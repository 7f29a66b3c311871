package model

import (
	"encoding/base64"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
)

func TestDecodeEntity(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		body         string
		wantPK       string
		wantRK       string
		hasPK, hasRK bool
		want         map[string]edm.Value
	}{
		{
			name:   "typical insert",
			body:   `{"PartitionKey":"p","RowKey":"r","Name":"Ada","Age":36,"Big@odata.type":"Edm.Int64","Big":"9223372036854775807"}`,
			wantPK: "p", wantRK: "r", hasPK: true, hasRK: true,
			want: map[string]edm.Value{"Name": edm.NewString("Ada"), "Age": edm.NewInt32(36), "Big": edm.NewInt64(math.MaxInt64)},
		},
		{
			name: "keys absent",
			body: `{"A":1}`,
			want: map[string]edm.Value{"A": edm.NewInt32(1)},
		},
		{
			name:  "empty keys are keys",
			body:  `{"PartitionKey":"","RowKey":""}`,
			hasPK: true, hasRK: true,
			want: map[string]edm.Value{},
		},
		{
			name:   "null keys count as absent",
			body:   `{"PartitionKey":null,"RowKey":"r"}`,
			wantRK: "r", hasRK: true,
			want: map[string]edm.Value{},
		},
		{
			name:   "keys annotated as strings",
			body:   `{"PartitionKey@odata.type":"Edm.String","PartitionKey":"p","RowKey":"r"}`,
			wantPK: "p", wantRK: "r", hasPK: true, hasRK: true,
			want: map[string]edm.Value{},
		},
		{
			name:   "client Timestamp ignored",
			body:   `{"PartitionKey":"p","RowKey":"r","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2020-01-01T00:00:00Z"}`,
			wantPK: "p", wantRK: "r", hasPK: true, hasRK: true,
			want: map[string]edm.Value{},
		},
		{
			name: "nulls dropped",
			body: `{"A":null,"B@odata.type":"Edm.Int64","B":null,"C":true}`,
			want: map[string]edm.Value{"C": edm.NewBoolean(true)},
		},
		{
			name: "metadata ignored",
			body: `{"odata.metadata":"https://a.table.core.windows.net/$metadata#t/@Element","odata.etag":"W/\"x\"","A":"x"}`,
			want: map[string]edm.Value{"A": edm.NewString("x")},
		},
		{
			name:   "Unicode names and keys",
			body:   `{"PartitionKey":"日本","RowKey":"😀","Prénom":"Zoë","名前":"x"}`,
			wantPK: "日本", wantRK: "😀", hasPK: true, hasRK: true,
			want: map[string]edm.Value{"Prénom": edm.NewString("Zoë"), "名前": edm.NewString("x")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DecodeEntity([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			e := d.Entity
			if e.PartitionKey != tc.wantPK || e.RowKey != tc.wantRK || d.HasPartitionKey != tc.hasPK || d.HasRowKey != tc.hasRK {
				t.Fatalf("keys = (%q %v, %q %v), want (%q %v, %q %v)", e.PartitionKey, d.HasPartitionKey, e.RowKey, d.HasRowKey, tc.wantPK, tc.hasPK, tc.wantRK, tc.hasRK)
			}
			if !e.Timestamp.IsZero() {
				t.Fatalf("Timestamp = %v, want zero (server-managed)", e.Timestamp)
			}
			if len(e.Properties) != len(tc.want) {
				t.Fatalf("properties = %v, want %v", e.Properties, tc.want)
			}
			for k, v := range tc.want {
				if got, ok := e.Properties[k]; !ok || !got.Equal(v) {
					t.Fatalf("property %s = %#v, want %#v", k, got, v)
				}
			}
		})
	}
}

func TestDecodeEntityErrors(t *testing.T) {
	t.Parallel()
	manyProps := func(n int, extra string) string {
		var b strings.Builder
		b.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, `,"p%d":%d`, i, i)
		}
		b.WriteString(extra)
		b.WriteByte('}')
		return b.String()
	}
	bin64k := base64.StdEncoding.EncodeToString(make([]byte, MaxBinaryLength))
	var big strings.Builder
	big.WriteString(`{"PartitionKey":"p","RowKey":"r"`)
	for i := 0; i < 17; i++ {
		fmt.Fprintf(&big, `,"b%d@odata.type":"Edm.Binary","b%d":"%s"`, i, i, bin64k)
	}
	big.WriteByte('}')

	tests := []struct {
		name string
		body string
		code apierr.Code
	}{
		{"empty body", ``, apierr.InvalidInput},
		{"not an object", `[1]`, apierr.InvalidInput},
		{"truncated", `{"PartitionKey":"p"`, apierr.InvalidInput},
		{"invalid UTF-8", "{\"A\":\"\xff\"}", apierr.InvalidInput},
		{"nested object", `{"A":{"B":1}}`, apierr.InvalidInput},
		{"array value", `{"A":[1]}`, apierr.InvalidInput},
		{"unknown type", `{"A@odata.type":"Edm.Decimal","A":"1"}`, apierr.InvalidInput},
		{"value does not fit type", `{"A@odata.type":"Edm.Int32","A":"x"}`, apierr.InvalidInput},
		{"int64 overflow", `{"A@odata.type":"Edm.Int64","A":"9223372036854775808"}`, apierr.InvalidInput},
		{"datetime before 1601", `{"A@odata.type":"Edm.DateTime","A":"1600-12-31T23:59:59Z"}`, apierr.OutOfRangeInput},
		{"double overflow", `{"A":1e999}`, apierr.OutOfRangeInput},
		{"duplicate property", `{"A":1,"A":2}`, apierr.DuplicatePropertiesSpecified},
		{"duplicate key", `{"PartitionKey":"a","PartitionKey":"b"}`, apierr.DuplicatePropertiesSpecified},
		{"duplicate annotation", `{"A@odata.type":"Edm.Int64","A@odata.type":"Edm.Int64","A":"1"}`, apierr.DuplicatePropertiesSpecified},
		{"numeric PartitionKey", `{"PartitionKey":1,"RowKey":"r"}`, codePrimaryKeyInvalidType},
		{"boolean RowKey", `{"PartitionKey":"p","RowKey":true}`, codePrimaryKeyInvalidType},
		{"RowKey annotated as Int64", `{"RowKey@odata.type":"Edm.Int64","RowKey":"1"}`, codePrimaryKeyInvalidType},
		{"forbidden key character", `{"PartitionKey":"a/b","RowKey":"r"}`, apierr.InvalidInput},
		{"escaped control character in key", `{"PartitionKey":"p","RowKey":"a\u0009b"}`, apierr.InvalidInput},
		{"key too long", `{"PartitionKey":"` + strings.Repeat("k", 1025) + `"}`, codeKeyValueTooLarge},
		{"invalid property name", `{"first-name":"x"}`, apierr.PropertyNameInvalid},
		{"property name with leading digit", `{"1st":"x"}`, apierr.PropertyNameInvalid},
		{"property name too long", `{"` + strings.Repeat("a", 256) + `":1}`, apierr.PropertyNameTooLong},
		{"string value too large", `{"S":"` + strings.Repeat("s", MaxStringLength+1) + `"}`, apierr.PropertyValueTooLarge},
		{"binary value too large", `{"B@odata.type":"Edm.Binary","B":"` + base64.StdEncoding.EncodeToString(make([]byte, MaxBinaryLength+1)) + `"}`, apierr.PropertyValueTooLarge},
		{"too many properties", manyProps(MaxProperties+1, ""), apierr.TooManyProperties},
		{"entity too large", big.String(), apierr.EntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := DecodeEntity([]byte(tc.body))
			wantCode(t, err, tc.code)
			if d.Entity != nil {
				t.Fatal("an entity was returned with the error")
			}
		})
	}

	t.Run("max properties with nulls and system members", func(t *testing.T) {
		body := manyProps(MaxProperties, `,"n1":null,"n2":null,"Timestamp":"x","odata.etag":"e"`)
		d, err := DecodeEntity([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Entity.Properties) != MaxProperties {
			t.Fatalf("%d properties, want %d", len(d.Entity.Properties), MaxProperties)
		}
	})
	// With full metadata every property comes with its type annotation,
	// plus "odata.*" members: none of them counts as a property.
	annotatedProps := func(n int) string {
		var b strings.Builder
		b.WriteString(`{"odata.metadata":"m","odata.etag":"e","PartitionKey":"p","RowKey":"r","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-01-01T00:00:00Z"`)
		for i := range n {
			fmt.Fprintf(&b, `,"p%d@odata.type":"Edm.Int64","p%d":"%d"`, i, i, i)
		}
		b.WriteByte('}')
		return b.String()
	}
	t.Run("max properties, every one annotated", func(t *testing.T) {
		d, err := DecodeEntity([]byte(annotatedProps(MaxProperties)))
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Entity.Properties) != MaxProperties {
			t.Fatalf("%d properties, want %d", len(d.Entity.Properties), MaxProperties)
		}
	})
	t.Run("one property past the bound, every one annotated", func(t *testing.T) {
		_, err := DecodeEntity([]byte(annotatedProps(MaxProperties + 1)))
		wantCode(t, err, apierr.TooManyProperties)
	})
	t.Run("members past the decoder's bound", func(t *testing.T) {
		_, err := DecodeEntity([]byte(manyProps(edm.MaxMembers, `,"broken"`)))
		wantCode(t, err, apierr.TooManyProperties)
	})
	t.Run("string at the limit", func(t *testing.T) {
		body := `{"S":"` + strings.Repeat("s", MaxStringLength) + `"}`
		wantCode(t, func() error { _, err := DecodeEntity([]byte(body)); return err }(), "")
	})
}

func TestDecodeInsert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		code apierr.Code
	}{
		{"both keys", `{"PartitionKey":"p","RowKey":"r","A":1}`, ""},
		{"empty keys", `{"PartitionKey":"","RowKey":""}`, ""},
		{"no PartitionKey", `{"RowKey":"r"}`, apierr.PropertiesNeedValue},
		{"no RowKey", `{"PartitionKey":"p"}`, apierr.PropertiesNeedValue},
		{"null RowKey", `{"PartitionKey":"p","RowKey":null}`, apierr.PropertiesNeedValue},
		{"no keys", `{}`, apierr.PropertiesNeedValue},
		{"bad body wins", `{"PartitionKey":"p"`, apierr.InvalidInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := DecodeInsert([]byte(tc.body))
			wantCode(t, err, tc.code)
			if err == nil && (e == nil || e.Properties == nil) {
				t.Fatal("no entity or nil Properties map")
			}
		})
	}
}

func TestDecodeUpdate(t *testing.T) {
	t.Parallel()
	t.Run("keys come from the URL", func(t *testing.T) {
		e, err := DecodeUpdate([]byte(`{"PartitionKey":"a''b","RowKey":"other","A":1}`), "a'b", "r")
		if err != nil {
			t.Fatal(err)
		}
		if e.PartitionKey != "a'b" || e.RowKey != "r" {
			t.Fatalf("keys = %q, %q; want the URL's", e.PartitionKey, e.RowKey)
		}
		if !e.Properties["A"].Equal(edm.NewInt32(1)) || len(e.Properties) != 1 {
			t.Fatalf("properties = %v", e.Properties)
		}
	})
	t.Run("body without keys", func(t *testing.T) {
		e, err := DecodeUpdate([]byte(`{"A":"x"}`), "p", "r")
		if err != nil || e.PartitionKey != "p" || e.RowKey != "r" {
			t.Fatalf("DecodeUpdate = %v, %v", e, err)
		}
	})
	t.Run("URL key checked", func(t *testing.T) {
		_, err := DecodeUpdate([]byte(`{}`), "p", "a?b")
		wantCode(t, err, apierr.InvalidInput)
	})
	t.Run("URL key length checked", func(t *testing.T) {
		_, err := DecodeUpdate([]byte(`{}`), strings.Repeat("k", 1025), "r")
		wantCode(t, err, codeKeyValueTooLarge)
	})
	t.Run("size counted with URL keys", func(t *testing.T) {
		// The properties fit with the body's (absent) keys but not with
		// 2 x 1024-character URL keys.
		body := bodyOf(entityOfSize(t, "", "", MaxEntitySize-4000))
		if _, err := DecodeUpdate(body, "p", "r"); err != nil {
			t.Fatalf("short URL keys: %v", err)
		}
		_, err := DecodeUpdate(body, strings.Repeat("k", 1024), strings.Repeat("k", 1024))
		wantCode(t, err, apierr.EntityTooLarge)
	})
	t.Run("size not counted with the body's keys", func(t *testing.T) {
		// The body's keys are ignored, so they must not make an entity
		// that fits with the URL's keys too large.
		long := strings.Repeat("k", 1024)
		body := bodyOf(entityOfSize(t, long, long, MaxEntitySize+100))
		e, err := DecodeUpdate(body, "p", "r")
		if err != nil {
			t.Fatalf("entity of %d bytes with the URL's keys: %v", MaxEntitySize+100-4*(1024-1), err)
		}
		if size := EntitySize(e); size > MaxEntitySize {
			t.Fatalf("accepted an entity of %d bytes", size)
		}
	})
	t.Run("body errors pass through", func(t *testing.T) {
		_, err := DecodeUpdate([]byte(`{"A":1,"A":1}`), "p", "r")
		wantCode(t, err, apierr.DuplicatePropertiesSpecified)
	})
}

func TestDecodedValuesAreValid(t *testing.T) {
	t.Parallel()
	// Everything DecodeInsert accepts passes ValidateEntity unchanged.
	body := `{"PartitionKey":"p","RowKey":"r","S":"s","I":1,"D":1.5,"B":true,` +
		`"L@odata.type":"Edm.Int64","L":"5","T@odata.type":"Edm.DateTime","T":"2024-01-01T00:00:00Z",` +
		`"G@odata.type":"Edm.Guid","G":"C9DA6455-213D-42C9-9A79-3E9149A57833","X@odata.type":"Edm.Binary","X":"AQ=="}`
	e, err := DecodeInsert([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := ValidateEntity(e); err != nil {
		t.Fatal(err)
	}
	if got := e.Properties["T"].Time; !got.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("T = %v", got)
	}
}

func TestPropertyCountHint(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{}`, 0},
		{`{"PartitionKey":"p","RowKey":"r"}`, 0},
		{`{"PartitionKey":"p","RowKey":"r","A":1,"B":"x"}`, 2},
		{`{"PartitionKey":"p","RowKey":"r","N@odata.type":"Edm.Int64","N":"1"}`, 1},
		// A DateTime's colons make the hint larger, never wrong.
		{`{"PartitionKey":"p","RowKey":"r","T@odata.type":"Edm.DateTime","T":"2024-01-01T00:00:00Z"}`, 3},
		{`garbage`, 0},
	} {
		if got := propertyCountHint([]byte(tc.body)); got != tc.want {
			t.Errorf("propertyCountHint(%s) = %d, want %d", tc.body, got, tc.want)
		}
	}
	if got := propertyCountHint([]byte(strings.Repeat(":", 10000))); got != MaxProperties {
		t.Errorf("hint for 10000 colons = %d, want the cap %d", got, MaxProperties)
	}
}

// bodyOf writes e as a JSON request body, its keys included.
func bodyOf(e *Entity) []byte {
	body := []byte{'{'}
	body = edm.AppendProperty(body, PartitionKeyName, edm.NewString(e.PartitionKey), edm.MinimalMetadata)
	body = append(body, ',')
	body = edm.AppendProperty(body, RowKeyName, edm.NewString(e.RowKey), edm.MinimalMetadata)
	for name, v := range e.Properties {
		body = append(body, ',')
		body = edm.AppendProperty(body, name, v, edm.MinimalMetadata)
	}
	return append(body, '}')
}
