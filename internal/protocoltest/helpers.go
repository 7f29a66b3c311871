package protocoltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// opTimeout bounds every SDK call of the suite, so a hung handler fails
// one subtest instead of the whole run.
const opTimeout = 30 * time.Second

func ctxFor(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), opTimeout)
	t.Cleanup(cancel)
	return ctx
}

// TableName derives a valid table name (^[A-Za-z][A-Za-z0-9]{2,62}$) from
// the test's name plus a suffix, unique per test and suffix even after the
// letters are cut: a hash of the full name keeps "A/b_1" and "Ab1" apart.
func TableName(t testing.TB, suffix string) string {
	full := t.Name() + "\x00" + suffix
	var b strings.Builder
	b.WriteByte('t')
	for _, r := range full {
		// Room for a 12-digit hash and a short prefix or suffix a test
		// adds: at most 55 characters of the 63 allowed.
		if b.Len() >= 43 {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	h := fnv.New64a()
	h.Write([]byte(full))
	fmt.Fprintf(&b, "%012x", h.Sum64()&0xffffffffffff)
	return b.String()
}

// newTable creates a fresh table for the test and returns its client.
func newTable(t testing.TB, sc *aztables.ServiceClient, suffix string) *aztables.Client {
	t.Helper()
	name := TableName(t, suffix)
	if _, err := sc.CreateTable(ctxFor(t), name, nil); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	return sc.NewClient(name)
}

// wantError asserts that err is the service's answer with this status and
// Azure error code.
func wantError(t testing.TB, err error, status int, code string) {
	t.Helper()
	if err == nil {
		t.Errorf("got success, want %d %s", status, code)
		return
	}
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Errorf("got %v (%T), want a *azcore.ResponseError %d %s", err, err, status, code)
		return
	}
	if re.StatusCode != status || re.ErrorCode != code {
		t.Errorf("got %d %s, want %d %s", re.StatusCode, re.ErrorCode, status, code)
	}
}

// wantRawError asserts a raw error response: status, x-ms-error-code and
// the odata.error body carrying the same code.
func wantRawError(t testing.TB, resp *Response, status int, code string) {
	t.Helper()
	if resp.StatusCode != status || resp.Header.Get("x-ms-error-code") != code {
		t.Errorf("got %d %s, want %d %s; body %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"), status, code, truncate(resp.Body))
		return
	}
	var body struct {
		Err struct {
			Code string `json:"code"`
		} `json:"odata.error"`
	}
	if err := json.Unmarshal(resp.Body, &body); err != nil || body.Err.Code != code {
		t.Errorf("error body %s does not carry odata.error code %s", truncate(resp.Body), code)
	}
}

func truncate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

// mustJSON marshals v or fails the test.
func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	return b
}

// decodeJSON decodes with json.Number, so number literals stay as sent.
func decodeJSON(t testing.TB, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", truncate(b), err)
	}
	return m
}

// addEntity inserts through the SDK and fails the test on error.
func addEntity(t testing.TB, c *aztables.Client, entity any) aztables.AddEntityResponse {
	t.Helper()
	var body []byte
	switch e := entity.(type) {
	case []byte:
		body = e
	case string:
		body = []byte(e)
	default:
		body = mustJSON(t, e)
	}
	resp, err := c.AddEntity(ctxFor(t), body, nil)
	if err != nil {
		t.Fatalf("AddEntity %s: %v", truncate(body), err)
	}
	return resp
}

// addEntities inserts many entities concurrently: bbolt group-commits
// concurrent writers, so seeding stays fast.
func addEntities(t testing.TB, c *aztables.Client, entities []map[string]any) {
	t.Helper()
	const workers = 8
	var wg sync.WaitGroup
	errs := make(chan error, len(entities))
	next := make(chan []byte)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for body := range next {
				if _, err := c.AddEntity(ctxFor(t), body, nil); err != nil {
					errs <- fmt.Errorf("AddEntity %s: %w", truncate(body), err)
				}
			}
		}()
	}
	for _, e := range entities {
		next <- mustJSON(t, e)
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// getEDM reads one entity through the SDK into aztables.EDMEntity, the
// typed view an application gets.
func getEDM(t testing.TB, c *aztables.Client, pk, rk string) (aztables.EDMEntity, azcore.ETag) {
	t.Helper()
	resp, err := c.GetEntity(ctxFor(t), pk, rk, nil)
	if err != nil {
		t.Fatalf("GetEntity(%q, %q): %v", pk, rk, err)
	}
	var e aztables.EDMEntity
	if err := json.Unmarshal(resp.Value, &e); err != nil {
		t.Fatalf("unmarshal EDMEntity %s: %v", truncate(resp.Value), err)
	}
	return e, resp.ETag
}

// listAll pages through a query and returns every entity's JSON and the
// page sizes.
func listAll(t testing.TB, c *aztables.Client, opts *aztables.ListEntitiesOptions) (entities [][]byte, pageSizes []int) {
	t.Helper()
	p := c.NewListEntitiesPager(opts)
	for p.More() {
		page, err := p.NextPage(ctxFor(t))
		if err != nil {
			t.Fatalf("list entities: %v", err)
		}
		entities = append(entities, page.Entities...)
		pageSizes = append(pageSizes, len(page.Entities))
		if len(pageSizes) > 10000 {
			t.Fatal("list entities: more than 10000 pages; the continuation does not advance")
		}
	}
	return entities, pageSizes
}

// keysOf returns "pk/rk" of each entity JSON, in order.
func keysOf(t testing.TB, entities [][]byte) []string {
	t.Helper()
	out := make([]string, len(entities))
	for i, b := range entities {
		var k struct{ PartitionKey, RowKey string }
		if err := json.Unmarshal(b, &k); err != nil {
			t.Fatalf("entity %s: %v", truncate(b), err)
		}
		out[i] = k.PartitionKey + "/" + k.RowKey
	}
	return out
}

// snapshot is the table's full content, ETags and Timestamps included, so
// comparing two snapshots proves that a failed write changed nothing.
func snapshot(t testing.TB, c *aztables.Client) string {
	t.Helper()
	entities, _ := listAll(t, c, nil)
	var b strings.Builder
	for _, e := range entities {
		m := decodeJSON(t, e)
		names := make([]string, 0, len(m))
		for k := range m {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			fmt.Fprintf(&b, "%s=%v;", k, m[k])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// unchanged asserts that the table still holds exactly the before snapshot.
func unchanged(t testing.TB, c *aztables.Client, before string) {
	t.Helper()
	if after := snapshot(t, c); after != before {
		t.Errorf("a failed write changed the table:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// entityPath is the URL path of one entity as the SDK writes it: quotes in
// keys doubled, each key percent-encoded as a path segment.
func entityPath(table, pk, rk string) string {
	return "/" + url.PathEscape(table) + "(PartitionKey='" + url.PathEscape(strings.ReplaceAll(pk, "'", "''")) +
		"',RowKey='" + url.PathEscape(strings.ReplaceAll(rk, "'", "''")) + "')"
}

// etagOf derives the ETag Azure gives an entity with this Timestamp value
// (as written in the payload): W/"datetime'<Timestamp, colons %3A>'".
func etagOf(timestamp string) string {
	return `W/"datetime'` + strings.ReplaceAll(timestamp, ":", "%3A") + `'"`
}

// commonHeaders asserts the headers every response carries ("Common REST
// API headers"): x-ms-request-id, x-ms-version and an RFC 1123 Date.
func commonHeaders(t testing.TB, resp *Response) {
	t.Helper()
	if resp.Header.Get("x-ms-request-id") == "" {
		t.Errorf("%d response lacks x-ms-request-id", resp.StatusCode)
	}
	if v := resp.Header.Get("x-ms-version"); v == "" {
		t.Errorf("%d response lacks x-ms-version", resp.StatusCode)
	}
	if d := resp.Header.Get("Date"); d == "" {
		t.Errorf("%d response lacks Date", resp.StatusCode)
	} else if _, err := http.ParseTime(d); err != nil {
		t.Errorf("Date %q is not an HTTP date: %v", d, err)
	}
}

// equalProp compares an SDK property value with the one sent: times by
// instant, doubles by bits (NaN and -0 included), the rest deeply.
func equalProp(got, want any) bool {
	switch w := want.(type) {
	case aztables.EDMDateTime:
		g, ok := got.(aztables.EDMDateTime)
		return ok && time.Time(g).Equal(time.Time(w))
	case float64:
		g, ok := got.(float64)
		return ok && math.Float64bits(g) == math.Float64bits(w)
	}
	return reflect.DeepEqual(got, want)
}

// equalProps compares two property maps with equalProp.
func equalProps(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok || !equalProp(g, w) {
			return false
		}
	}
	return true
}
