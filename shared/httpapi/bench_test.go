package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
)

// benchEntity is the load benchmark's entity (shared/loadgen's template:
// about 400 bytes, every Edm type, properties in sorted order as aztables
// sends them), with the keys left to fill in.
const (
	benchBeforePK = `{"Active":true,"Blob":"AAECAwQF","Blob@odata.type":"Edm.Binary","City":"c417","Count":123456789,` +
		`"Created":"2024-05-01T12:34:56.1234567Z","Created@odata.type":"Edm.DateTime","Name":"bench",` +
		`"PartitionKey":"`
	benchBetweenKeys = `","Payload":"","Price":4242.25,"Ref":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"Ref@odata.type":"Edm.Guid","RowKey":"`
	benchAfterRK = `","Total":"1152921504606846977","Total@odata.type":"Edm.Int64"}`
)

// batchTemplate is a 100-insert $batch body, byte for byte as aztables
// v1.4.1 writes it (see loadgen's batchBuilder), whose PartitionKey is
// rewritten in place for each transaction.
type batchTemplate struct {
	contentType string
	body        []byte
	// pkDigits are the offsets of the six partition digits in every
	// operation's body.
	pkDigits []int
}

func newBatchTemplate(table string, ops int) *batchTemplate {
	const batchID, changesetID = "0b9c8f0e-6d2a-4c8e-9f1b-1f2e3d4c5b6a", "8a7b6c5d-4e3f-4a1b-8c9d-0e1f2a3b4c5d"
	t := &batchTemplate{contentType: "multipart/mixed; boundary=batch_" + batchID}
	var b bytes.Buffer
	b.WriteString("--batch_" + batchID + "\r\nContent-Type: multipart/mixed; boundary=changeset_" + changesetID + "\r\n\r\n")
	for i := range ops {
		rk := strconv.Itoa(10_000_000_000 + i)[1:] // ten digits
		entity := benchBeforePK + "b0001-000000" + benchBetweenKeys + rk + benchAfterRK
		if i > 0 {
			b.WriteString("\r\n")
		}
		b.WriteString("--changeset_" + changesetID + "\r\nContent-Transfer-Encoding: binary\r\nContent-Type: application/http\r\n\r\n")
		b.WriteString("POST http://127.0.0.1:10877/devstoreaccount1/" + table +
			"?%24format=application%2Fjson%3Bodata%3Dminimalmetadata HTTP/1.1\r\n")
		b.WriteString("Accept: application/json;odata=minimalmetadata\r\nContent-Length: " + strconv.Itoa(len(entity)) + "\r\n")
		b.WriteString("Content-Type: application/json\r\nDataServiceVersion: \r\nPrefer: return-no-content\r\nx-ms-version: \r\n\r\n")
		t.pkDigits = append(t.pkDigits, b.Len()+len(benchBeforePK)+len("b0001-"))
		b.WriteString(entity)
	}
	b.WriteString("\r\n--changeset_" + changesetID + "--\r\n\r\n--batch_" + batchID + "--\r\n")
	t.body = b.Bytes()
	return t
}

// setPartition writes n, zero-padded to six digits, as every operation's
// partition number.
func (t *batchTemplate) setPartition(n int) {
	digits := strconv.Itoa(1_000_000 + n%1_000_000)[1:]
	for _, off := range t.pkDigits {
		copy(t.body[off:], digits)
	}
}

// discardWriter is a ResponseWriter that keeps the status and the body's
// length, so the benchmark measures the handler rather than a recorder.
type discardWriter struct {
	header http.Header
	status int
	body   []byte
}

func (w *discardWriter) Header() http.Header    { return w.header }
func (w *discardWriter) WriteHeader(status int) { w.status = status }
func (w *discardWriter) Write(b []byte) (int, error) {
	w.body = append(w.body[:0], b...)
	return len(b), nil
}

// BenchmarkBatchInsert100 drives the real handler over a bbolt store with
// the load benchmark's batch phase: one entity group transaction of 100
// inserts of the bench entity per iteration, each into a new partition,
// signed with SharedKeyLite as the bench signs it. It is the CPU budget of
// a batch on the local server (issue 3); compare instruction counts
// (callgrind) rather than wall time on a shared machine.
func BenchmarkBatchInsert100(b *testing.B) {
	st, err := boltstore.Open(filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := st.Close(); err != nil {
			b.Error(err)
		}
	})
	const table = "bench"
	if _, err := st.CreateTable(context.Background(), auth.DevStoreAccountName, table); err != nil {
		b.Fatal(err)
	}
	h, err := httpapi.NewHandler(st, []auth.Account{auth.DevStoreAccount()}, httpapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tmpl := newBatchTemplate(table, 100)
	// The signature covers the date and the path, not the body, so one
	// signed header set serves every iteration.
	signed, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:10877/devstoreaccount1/$batch", nil)
	if err != nil {
		b.Fatal(err)
	}
	signed.Header = http.Header{
		"X-Ms-Version":       {"2019-02-02"},
		"Dataserviceversion": {"3.0"},
		"Accept":             {"application/json;odata=minimalmetadata"},
		"Content-Type":       {tmpl.contentType},
		"X-Ms-Date":          {time.Now().UTC().Format(http.TimeFormat)},
	}
	if err := auth.SignSharedKeyLite(signed, auth.DevStoreAccountName, auth.DevStoreAccount().Keys[0]); err != nil {
		b.Fatal(err)
	}
	w := &discardWriter{}
	reader := bytes.NewReader(nil)
	partition := 0
	b.SetBytes(int64(len(tmpl.body)))
	b.ReportAllocs()
	for b.Loop() {
		partition++
		tmpl.setPartition(partition)
		reader.Reset(tmpl.body)
		r := *signed
		r.Body = io.NopCloser(reader)
		r.ContentLength = int64(len(tmpl.body))
		r.RequestURI = "/devstoreaccount1/$batch"
		r.RemoteAddr = "127.0.0.1:50000"
		w.header = http.Header{}
		h.ServeHTTP(w, &r)
		// A failed transaction is still 202, with one part of about 1 KB;
		// 100 parts of about 500 bytes are far longer.
		if w.status != http.StatusAccepted || len(w.body) < 100*400 {
			b.Fatalf("status %d: %s", w.status, w.body[:min(len(w.body), 2048)])
		}
	}
}
