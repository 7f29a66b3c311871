package model

import (
	"errors"
	"net/http"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/edm"
)

// FuzzDecodeEntity checks that any body either decodes to an entity that
// passes ValidateEntity and survives re-encoding, or fails with a 400
// *apierr.Error, and that nothing panics.
func FuzzDecodeEntity(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"r","A":1,"B":"x","C":1.5,"D":true}`,
		`{"PartitionKey":"a/b","RowKey":"r"}`,
		`{"PartitionKey":1}`,
		`{"first-name":1,"Timestamp":"x","odata.etag":"y"}`,
		`{"L@odata.type":"Edm.Int64","L":"1","G@odata.type":"Edm.Guid","G":"c9da6455213d42c99a793e9149a57833"}`,
		`{"T@odata.type":"Edm.DateTime","T":"1601-01-01T00:00:00Z","N":null}`,
		`{"A":1,"A":2}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := DecodeEntity(body)
		if err != nil {
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.HTTPStatus() != http.StatusBadRequest {
				t.Fatalf("error %v is not a 400 *apierr.Error", err)
			}
			return
		}
		e := d.Entity
		if got, want := d.entitySize(), EntitySize(e); got != want {
			t.Fatalf("size summed while decoding = %d, EntitySize = %d", got, want)
		}
		if err := ValidateEntity(e); err != nil {
			t.Fatalf("decoded entity fails ValidateEntity: %v", err)
		}
		out := []byte{'{'}
		out = edm.AppendProperty(out, PartitionKeyName, edm.NewString(e.PartitionKey), edm.FullMetadata)
		out = append(out, ',')
		out = edm.AppendProperty(out, RowKeyName, edm.NewString(e.RowKey), edm.FullMetadata)
		for name, v := range e.Properties {
			out = append(out, ',')
			out = edm.AppendProperty(out, name, v, edm.MinimalMetadata)
		}
		out = append(out, '}')
		again, err := DecodeInsert(out)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		if again.PartitionKey != e.PartitionKey || again.RowKey != e.RowKey || len(again.Properties) != len(e.Properties) {
			t.Fatalf("round trip changed the entity: %+v vs %+v", again, e)
		}
		for name, v := range e.Properties {
			if !again.Properties[name].Equal(v) {
				t.Fatalf("property %s: %#v became %#v", name, v, again.Properties[name])
			}
		}
	})
}

func BenchmarkDecodeInsert(b *testing.B) {
	body := []byte(`{"PartitionKey":"customer-0042","RowKey":"order-000123","Name":"Ada Lovelace",` +
		`"Age":36,"Balance":1234.5,"Active":true,` +
		`"Orders@odata.type":"Edm.Int64","Orders":"9876543210",` +
		`"Since@odata.type":"Edm.DateTime","Since":"2024-12-23T09:20:10.1623783Z",` +
		`"Id@odata.type":"Edm.Guid","Id":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"Blob@odata.type":"Edm.Binary","Blob":"AAECAwQFBgcICQ=="}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeInsert(body); err != nil {
			b.Fatal(err)
		}
	}
}
