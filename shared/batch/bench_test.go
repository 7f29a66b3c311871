package batch_test

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/batch"
)

// benchEntity is a load-benchmark entity (about 400 bytes, every Edm type),
// with %PK% and %RK% where the keys go.
const benchEntity = `{"Active":true,"Blob":"AAECAwQF","Blob@odata.type":"Edm.Binary","City":"c417","Count":123456789,` +
	`"Created":"2024-05-01T12:34:56.1234567Z","Created@odata.type":"Edm.DateTime","Name":"bench",` +
	`"PartitionKey":"%PK%","Payload":"","Price":4242.25,"Ref":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
	`"Ref@odata.type":"Edm.Guid","RowKey":"%RK%","Total":"1152921504606846977","Total@odata.type":"Edm.Int64"}`

// sdkBatch100 is a changeset of 100 inserts byte for byte as aztables
// v1.4.1 writes it (see loadgen's batchBuilder), with its Content-Type.
func sdkBatch100() (contentType string, body []byte) {
	const batchID, changesetID = "0b9c8f0e-6d2a-4c8e-9f1b-1f2e3d4c5b6a", "8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d"
	var b bytes.Buffer
	b.WriteString("--batch_" + batchID + "\r\nContent-Type: multipart/mixed; boundary=changeset_" + changesetID + "\r\n\r\n")
	for i := range 100 {
		entity := strings.NewReplacer("%PK%", "b0001-000042", "%RK%", "0000000"+strconv.Itoa(100+i)).Replace(benchEntity)
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("--changeset_" + changesetID + "\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n")
		b.WriteString("POST http://127.0.0.1:10877/devstoreaccount1/bench?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1\r\n")
		b.WriteString("Accept: application/json;odata=minimalmetadata\r\nContent-Length: " + strconv.Itoa(len(entity)) + "\r\n")
		b.WriteString("Content-Type: application/json\r\nDataServiceVersion: \r\nPrefer: return-no-content\r\nx-ms-version: \r\n\r\n")
		b.WriteString(entity)
	}
	b.WriteString("\r\n--changeset_" + changesetID + "--\r\n\r\n--batch_" + batchID + "--\r\n")
	return "multipart/mixed; boundary=batch_" + batchID, b.Bytes()
}

func BenchmarkParse100(b *testing.B) {
	contentType, body := sdkBatch100()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		req, err := batch.Parse(contentType, bytes.NewReader(body))
		if err != nil || len(req.Operations) != 100 {
			b.Fatal(err)
		}
	}
}

// benchResponses are the parts of 100 inserts sent with "Prefer:
// return-no-content", the load benchmark's batch phase.
func benchResponses() []batch.Response {
	parts := make([]batch.Response, 100)
	for i := range parts {
		loc := "http://127.0.0.1:10877/devstoreaccount1/bench(PartitionKey='b0001-000042',RowKey='0000000" + strconv.Itoa(100+i) + "')"
		parts[i] = batch.InsertedNoContent(loc, `W/"datetime'2024-12-23T09%3A20%3A10.1623783Z'"`)
	}
	return parts
}

var benchBoundaries = batch.Boundaries{Batch: "0b9c8f0e-6d2a-4c8e-9f1b-1f2e3d4c5b6a", Changeset: "8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d"}

func BenchmarkWriteResponse100(b *testing.B) {
	parts := benchResponses()
	var buf bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := batch.WriteResponse(&buf, benchBoundaries, parts); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

func BenchmarkWriteFailure(b *testing.B) {
	failure := &batch.OperationError{Index: 42, Err: apierr.New(apierr.EntityAlreadyExists)}
	at := time.Date(2024, 12, 23, 9, 20, 10, 162378300, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		if err := batch.WriteFailure(io.Discard, benchBoundaries, failure, "f0e1d2c3-b4a5-4697-8889-7a6b5c4d3e2f", at); err != nil {
			b.Fatal(err)
		}
	}
}
