package edm

import (
	"testing"
	"time"
)

// typicalEntity is a 10-property entity as the Go SDK sends it.
const typicalEntity = `{"PartitionKey":"customer-0042","RowKey":"order-000123","Name":"Ada Lovelace",` +
	`"Age":36,"Balance":1234.5,"Active":true,` +
	`"Orders@odata.type":"Edm.Int64","Orders":"9876543210",` +
	`"Since@odata.type":"Edm.DateTime","Since":"2024-12-23T09:20:10.1623783Z",` +
	`"Id@odata.type":"Edm.Guid","Id":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
	`"Blob@odata.type":"Edm.Binary","Blob":"AAECAwQFBgcICQ=="}`

func BenchmarkDecodeObject(b *testing.B) {
	data := []byte(typicalEntity)
	props := make(map[string]Value, 16)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		clear(props)
		if err := DecodeObject(data, func(name string, v Value, _ bool) error {
			props[name] = v
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendEntity(b *testing.B) {
	var props []prop
	if err := DecodeObject([]byte(typicalEntity), func(name string, v Value, _ bool) error {
		props = append(props, prop{Name: name, Value: v})
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	props = append(props, prop{Name: "Timestamp", Value: NewDateTime(time.Now())})
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = buf[:0]
		buf = append(buf, '{')
		for i, pr := range props {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = AppendProperty(buf, pr.Name, pr.Value, MinimalMetadata)
		}
		buf = append(buf, '}')
	}
	b.SetBytes(int64(len(buf)))
}

// loadEntity is the load benchmark's entity: keys, every Edm type, sorted
// names, as aztables sends it.
const loadEntity = `{"Active":true,"Blob":"AAECAwQF","Blob@odata.type":"Edm.Binary","City":"c417","Count":123456789,` +
	`"Created":"2024-05-01T12:34:56.1234567Z","Created@odata.type":"Edm.DateTime","Name":"bench",` +
	`"PartitionKey":"b0001-000042","Payload":"","Price":4242.25,"Ref":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
	`"Ref@odata.type":"Edm.Guid","RowKey":"0000000123","Total":"1152921504606846977","Total@odata.type":"Edm.Int64"}`

func BenchmarkDecodeLoadEntity(b *testing.B) {
	data := []byte(loadEntity)
	props := make(map[string]Value, 16)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		clear(props)
		if err := DecodeObject(data, func(name string, v Value, _ bool) error {
			props[name] = v
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendDateTime(b *testing.B) {
	t := time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)
	buf := make([]byte, 0, 64)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendDateTime(buf[:0], t)
	}
}
