package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/httpapi"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/boltstore"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// benchEntity is the load benchmark's entity (internal/loadgen's template:
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

// batchHarness drives the real handler over a bbolt store in a temp dir
// with load-benchmark batches, signed with SharedKeyLite as the bench
// signs them.
type batchHarness struct {
	h      *httpapi.Handler
	signed *http.Request
}

func newBatchHarness(tb testing.TB, table string) *batchHarness {
	tb.Helper()
	st, err := boltstore.Open(filepath.Join(tb.TempDir(), "bench.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := st.Close(); err != nil {
			tb.Error(err)
		}
	})
	if _, err := st.CreateTable(context.Background(), auth.DevStoreAccountName, table); err != nil {
		tb.Fatal(err)
	}
	h, err := httpapi.NewHandler(newService(tb, st), []auth.Account{auth.DevStoreAccount()}, httpapi.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	// The signature covers the date and the path, not the body, so one
	// signed header set serves every request.
	signed, err := http.NewRequest(http.MethodPost, "http://127.0.0.1:10877/devstoreaccount1/$batch", nil)
	if err != nil {
		tb.Fatal(err)
	}
	signed.Header = http.Header{
		"X-Ms-Version":       {"2019-02-02"},
		"Dataserviceversion": {"3.0"},
		"Accept":             {"application/json;odata=minimalmetadata"},
		"X-Ms-Date":          {time.Now().UTC().Format(http.TimeFormat)},
	}
	if err := auth.SignSharedKeyLite(signed, auth.DevStoreAccountName, auth.DevStoreAccount().Keys[0]); err != nil {
		tb.Fatal(err)
	}
	return &batchHarness{h: h, signed: signed}
}

// send serves one $batch request of body into w.
func (bh *batchHarness) send(w *discardWriter, contentType string, body []byte) {
	r := *bh.signed
	r.Header = bh.signed.Header.Clone()
	r.Header["Content-Type"] = []string{contentType}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.RequestURI = "/devstoreaccount1/$batch"
	r.RemoteAddr = "127.0.0.1:50000"
	w.header = http.Header{}
	bh.h.ServeHTTP(w, &r)
}

// BenchmarkBatchInsert100 drives the real handler over a bbolt store with
// the load benchmark's batch phase: one entity group transaction of 100
// inserts of the bench entity per iteration, each into a new partition. It
// is the CPU a batch costs on the local server (docs/performance.md, "Local
// server on bbolt"); compare instruction counts (callgrind) rather than
// wall time on a shared machine.
func BenchmarkBatchInsert100(b *testing.B) {
	bh := newBatchHarness(b, "bench")
	tmpl := newBatchTemplate("bench", 100)
	w := &discardWriter{}
	partition := 0
	b.SetBytes(int64(len(tmpl.body)))
	b.ReportAllocs()
	for b.Loop() {
		partition++
		tmpl.setPartition(partition)
		bh.send(w, tmpl.contentType, tmpl.body)
		// A failed transaction is still 202, with one part of about 1 KB;
		// 100 parts of about 500 bytes are far longer.
		if w.status != http.StatusAccepted || len(w.body) < 100*400 {
			b.Fatalf("status %d: %s", w.status, w.body[:min(len(w.body), 2048)])
		}
	}
}

// TestBatchBuffersAreNotShared sends transactions from several goroutines
// at once, each into its own partitions, while the handler recycles batch
// request and response buffers: every response must carry its own 100
// parts, each naming its own partition, and none of another request's.
func TestBatchBuffersAreNotShared(t *testing.T) {
	t.Parallel()
	bh := newBatchHarness(t, "recycled")
	const clients, rounds = 4, 5
	errs := make(chan error, clients)
	for client := range clients {
		go func() {
			tmpl := newBatchTemplate("recycled", 100)
			w := &discardWriter{}
			for round := range rounds {
				partition := client*rounds + round + 1
				tmpl.setPartition(partition)
				bh.send(w, tmpl.contentType, tmpl.body)
				want := fmt.Sprintf("PartitionKey='b0001-%06d'", partition)
				body := string(w.body)
				// Location and DataServiceId name the entity of each part.
				if w.status != http.StatusAccepted || strings.Count(body, "HTTP/1.1 204 ") != 100 ||
					strings.Count(body, want) != 200 || strings.Count(body, "PartitionKey=") != 200 {
					errs <- fmt.Errorf("partition %d: status %d, body:\n%.2000s", partition, w.status, w.body)
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// newService is the Table service over st, as the local server builds it.
func newService(tb testing.TB, st store.Store) *tables.Service {
	tb.Helper()
	svc, err := tables.New(st, tables.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	return svc
}

// entityHarness drives the real handler over the in-memory store with the
// load benchmark's single-entity requests (internal/loadgen's insert and
// get): the headers aztables sends, signed with SharedKeyLite. It measures
// what the handler costs per request between net/http and the store.
type entityHarness struct {
	h *httpapi.Handler
	// insert and get are signed requests to copy: the signature covers the
	// date and the path, not the body, so one header set serves every
	// request to the same path.
	insert, get *http.Request
}

func newEntityHarness(tb testing.TB) *entityHarness {
	tb.Helper()
	st, err := memstore.New()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if _, err := st.CreateTable(context.Background(), auth.DevStoreAccountName, "bench"); err != nil {
		tb.Fatal(err)
	}
	h, err := httpapi.NewHandler(newService(tb, st), []auth.Account{auth.DevStoreAccount()}, httpapi.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	eh := &entityHarness{h: h}
	sign := func(method, path string) *http.Request {
		r, err := http.NewRequest(method, "http://127.0.0.1:10877"+path, nil)
		if err != nil {
			tb.Fatal(err)
		}
		r.Header = http.Header{
			"X-Ms-Version":       {"2019-02-02"},
			"Dataserviceversion": {"3.0"},
			"Accept":             {"application/json;odata=minimalmetadata"},
			"X-Ms-Date":          {time.Now().UTC().Format(http.TimeFormat)},
		}
		if err := auth.SignSharedKeyLite(r, auth.DevStoreAccountName, auth.DevStoreAccount().Keys[0]); err != nil {
			tb.Fatal(err)
		}
		r.RequestURI = path
		r.RemoteAddr = "127.0.0.1:50000"
		return r
	}
	eh.insert = sign(http.MethodPost, "/devstoreaccount1/bench")
	eh.insert.Header["Content-Type"] = []string{"application/json"}
	eh.get = sign(http.MethodGet, "/devstoreaccount1/bench(PartitionKey='p0000001',RowKey='r0000000001')")
	return eh
}

// send serves a copy of signed with body into w and returns the status.
func (eh *entityHarness) send(w *discardWriter, signed *http.Request, body []byte) int {
	r := *signed
	r.Header = signed.Header.Clone()
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	} else {
		r.Body = http.NoBody
	}
	w.header = http.Header{}
	eh.h.ServeHTTP(w, &r)
	return w.status
}

// benchEntityBody is the load benchmark's entity with keys pk and rk.
func benchEntityBody(b []byte, pk, rk string) []byte {
	return append(append(append(append(append(b[:0], benchBeforePK...), pk...), benchBetweenKeys...), rk...), benchAfterRK...)
}

// BenchmarkInsertEntity is one Insert Entity (201 with the entity, as
// aztables' AddEntity asks) per iteration, each with a new RowKey.
func BenchmarkInsertEntity(b *testing.B) {
	eh := newEntityHarness(b)
	w := &discardWriter{}
	var body []byte
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		n++
		body = benchEntityBody(body, "p0000001", strconv.Itoa(10_000_000_000 + n)[1:])
		if status := eh.send(w, eh.insert, body); status != http.StatusCreated {
			b.Fatalf("status %d: %s", status, w.body)
		}
	}
}

// BenchmarkGetEntity is one point read (aztables' GetEntity) of the same
// entity per iteration.
func BenchmarkGetEntity(b *testing.B) {
	eh := newEntityHarness(b)
	w := &discardWriter{}
	if status := eh.send(w, eh.insert, benchEntityBody(nil, "p0000001", "r0000000001")); status != http.StatusCreated {
		b.Fatalf("status %d: %s", status, w.body)
	}
	b.ReportAllocs()
	for b.Loop() {
		if status := eh.send(w, eh.get, nil); status != http.StatusOK {
			b.Fatalf("status %d: %s", status, w.body)
		}
	}
}

// TestEntityBuffersAreNotShared sends inserts from several goroutines at
// once while the handler recycles their request and answer bodies: every
// answer must echo its own entity, and every stored entity must hold what
// its own request sent, none of another's bytes.
func TestEntityBuffersAreNotShared(t *testing.T) {
	t.Parallel()
	eh := newEntityHarness(t)
	const clients, rounds = 4, 25
	errs := make(chan error, clients)
	for client := range clients {
		go func() {
			w := &discardWriter{}
			var body []byte
			for round := range rounds {
				rk := fmt.Sprintf("c%d-%04d", client, round)
				body = benchEntityBody(body, "shared", rk)
				if status := eh.send(w, eh.insert, body); status != http.StatusCreated ||
					!strings.Contains(string(w.body), `"RowKey":"`+rk+`"`) || strings.Count(string(w.body), `"RowKey":`) != 1 {
					errs <- fmt.Errorf("insert %s: status %d, body %s", rk, status, w.body)
					return
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// The stored entities, read back in one query: each holds its keys and
	// the template's values, so no request body was overwritten while the
	// service still read it.
	const query = "/devstoreaccount1/bench()?$filter=PartitionKey%20eq%20'shared'"
	r, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:10877"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header = http.Header{"X-Ms-Version": {"2019-02-02"}, "Accept": {"application/json;odata=nometadata"},
		"X-Ms-Date": {time.Now().UTC().Format(http.TimeFormat)}}
	if err := auth.SignSharedKeyLite(r, auth.DevStoreAccountName, auth.DevStoreAccount().Keys[0]); err != nil {
		t.Fatal(err)
	}
	r.RequestURI, r.RemoteAddr = query, "127.0.0.1:50000"
	w := &discardWriter{}
	if status := eh.send(w, r, nil); status != http.StatusOK {
		t.Fatalf("query: status %d: %s", status, w.body)
	}
	body := string(w.body)
	want := benchEntityBody(nil, "shared", "RK")
	for _, member := range []string{`"City":"c417"`, `"Total":"1152921504606846977"`, `"Ref":"c9da6455-213d-42c9-9a79-3e9149a57833"`} {
		if !strings.Contains(string(want), member) {
			t.Fatalf("the template has no %s", member)
		}
		if n := strings.Count(body, member); n != clients*rounds {
			t.Errorf("%d entities hold %s, want %d", n, member, clients*rounds)
		}
	}
	for client := range clients {
		for round := range rounds {
			if rk := fmt.Sprintf(`"RowKey":"c%d-%04d"`, client, round); strings.Count(body, rk) != 1 {
				t.Errorf("the query answer holds %s %d times, want once", rk, strings.Count(body, rk))
			}
		}
	}
}
