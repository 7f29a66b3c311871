package protocoltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// unicodeKeys are keys a continuation token must carry intact ("Query
// timeout and pagination": the tokens are opaque). All lie below U+D800 or
// in the supplementary planes, so UTF-8 byte order and UTF-16 order agree
// and the expected listing order is unambiguous.
var unicodeKeys = []string{
	"",                               // empty keys are legal
	" lead and trail ",               // spaces
	"a+b",                            // '+' must not turn into a space
	"100%",                           // '%' must not start an escape
	"50%25",                          // an escape-looking sequence that is literal
	"it's",                           // a quote, doubled in URLs
	"''",                             // two quotes
	"a&b=c;d,e",                      // query-string punctuation
	"(paren)",                        // OData syntax
	"e\u0301",                        // combining mark: not normalised
	"\u00e9",                         // precomposed: a different key
	"日本語",                            // CJK
	"\u05e9\u05dc\u05d5\u05dd",       // RTL (Hebrew)
	"\u0645\u0631\u062d\u0628\u0627", // RTL (Arabic)
	"😀 emoji",                        // supplementary plane (a UTF-16 surrogate pair)
	"𝄞𠀀",                             // more supplementary code points
}

// suiteContinuation covers paging: $top with NextPartitionKey/NextRowKey
// across many entities and across keys no simple token format survives.
func suiteContinuation(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()

	t.Run("ManyEntitiesSmallTop", func(t *testing.T) {
		c := newTable(t, sc, "")
		name := TableName(t, "")
		var entities []map[string]any
		var want []string
		for p := range 3 {
			for r := range 40 {
				pk, rk := fmt.Sprintf("part%d", p), fmt.Sprintf("row%03d", r)
				entities = append(entities, map[string]any{"PartitionKey": pk, "RowKey": rk, "N": p*100 + r})
				want = append(want, pk+"/"+rk)
			}
		}
		addEntities(t, c, entities)

		for _, top := range []int32{1, 7, 40, 1000} {
			t.Run(fmt.Sprintf("Top%d", top), func(t *testing.T) {
				got, sizes := listAll(t, c, &aztables.ListEntitiesOptions{Top: &top})
				if keys := keysOf(t, got); !slices.Equal(keys, want) {
					t.Errorf("listed %d entities, want all %d in (PartitionKey, RowKey) order; first differences: %s", len(keys), len(want), firstDiff(keys, want))
				}
				for i, n := range sizes {
					if n > int(top) {
						t.Errorf("page %d holds %d entities, more than $top=%d", i, n, top)
					}
				}
				if minPages := (len(want) + int(top) - 1) / int(top); len(sizes) < minPages {
					t.Errorf("%d pages, want at least %d", len(sizes), minPages)
				}
			})
		}

		t.Run("FilterAcrossPages", func(t *testing.T) {
			top := int32(4)
			filter := "N ge 35 and N lt 205 and PartitionKey ne 'part1'"
			got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Top: &top, Filter: &filter})
			var wantKeys []string
			for _, e := range entities {
				n := e["N"].(int)
				if n >= 35 && n < 205 && e["PartitionKey"] != "part1" {
					wantKeys = append(wantKeys, e["PartitionKey"].(string)+"/"+e["RowKey"].(string))
				}
			}
			if keys := keysOf(t, got); !slices.Equal(keys, wantKeys) {
				t.Errorf("got %q, want %q", keys, wantKeys)
			}
		})

		t.Run("RawHeaders", func(t *testing.T) {
			// The first page stops at $top=39 with a continuation; following
			// x-ms-continuation-NextPartitionKey/NextRowKey by hand reaches
			// every entity once, and the last page carries no continuation.
			got := rawListAll(t, srv, name, url.Values{"$top": {"39"}}, nil)
			if keys := keysOfMaps(got); !slices.Equal(keys, want) {
				t.Errorf("raw paging: %s", firstDiff(keys, want))
			}
		})
	})

	t.Run("UnicodeKeys", func(t *testing.T) {
		c := newTable(t, sc, "")
		table := TableName(t, "")
		var entities []map[string]any
		var want []string
		for _, pk := range unicodeKeys {
			for _, rk := range []string{"", "x", pk} {
				k := pk + "/" + rk
				if slices.Contains(want, k) {
					continue
				}
				entities = append(entities, map[string]any{"PartitionKey": pk, "RowKey": rk, "Echo": pk + "|" + rk})
				want = append(want, k)
			}
		}
		addEntities(t, c, entities)
		// Ordinal order: PartitionKey, then RowKey.
		slices.SortFunc(entities, func(a, b map[string]any) int {
			if c := strings.Compare(a["PartitionKey"].(string), b["PartitionKey"].(string)); c != 0 {
				return c
			}
			return strings.Compare(a["RowKey"].(string), b["RowKey"].(string))
		})
		want = want[:0]
		for _, e := range entities {
			want = append(want, e["PartitionKey"].(string)+"/"+e["RowKey"].(string))
		}

		for _, top := range []int32{1, 2, 5} {
			t.Run(fmt.Sprintf("Top%d", top), func(t *testing.T) {
				got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Top: &top})
				if keys := keysOf(t, got); !slices.Equal(keys, want) {
					t.Errorf("paged listing differs from the ordinal key order: %s", firstDiff(keys, want))
				}
			})
		}

		t.Run("PointOperations", func(t *testing.T) {
			for _, e := range entities {
				pk, rk := e["PartitionKey"].(string), e["RowKey"].(string)
				if pk == "" {
					// The SDK refuses an empty PartitionKey in GetEntity
					// ("parameter partitionKey cannot be empty"), though
					// Azure allows it: read it raw.
					resp := srv.Do(t, Request{Method: http.MethodGet, Path: entityPath(table, pk, rk)})
					if resp.StatusCode != http.StatusOK {
						t.Errorf("GET (%q, %q): %d %s", pk, rk, resp.StatusCode, truncate(resp.Body))
						continue
					}
					if got := decodeJSON(t, resp.Body)["Echo"]; got != pk+"|"+rk {
						t.Errorf("GET (%q, %q) returned Echo %v", pk, rk, got)
					}
					continue
				}
				got, etag := getEDM(t, c, pk, rk)
				if got.PartitionKey != pk || got.RowKey != rk || got.Properties["Echo"] != pk+"|"+rk {
					t.Errorf("GetEntity(%q, %q) returned %q/%q Echo=%v", pk, rk, got.PartitionKey, got.RowKey, got.Properties["Echo"])
				}
				upd, err := c.UpdateEntity(ctxFor(t), mustJSON(t, map[string]any{"PartitionKey": pk, "RowKey": rk, "Touched": true}),
					&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge, IfMatch: &etag})
				if err != nil {
					t.Errorf("merge (%q, %q): %v", pk, rk, err)
					continue
				}
				if _, err := c.DeleteEntity(ctxFor(t), pk, rk, &aztables.DeleteEntityOptions{IfMatch: &upd.ETag}); err != nil {
					t.Errorf("delete (%q, %q): %v", pk, rk, err)
				}
			}
			// Only the empty-PartitionKey entities are left.
			left, _ := listAll(t, c, nil)
			for _, k := range keysOf(t, left) {
				if !strings.HasPrefix(k, "/") {
					t.Errorf("entity %q survived its delete", k)
				}
			}
		})
	})
}

func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("at %d got %q, want %q (got %d, want %d entities)", i, got[i], want[i], len(got), len(want))
		}
	}
	return fmt.Sprintf("got %d entities, want %d", len(got), len(want))
}

// rawListAll queries a table with raw requests, following the continuation
// headers by hand until a page carries none, and returns every entity.
func rawListAll(t testing.TB, srv *Server, table string, query url.Values, header http.Header) []map[string]any {
	t.Helper()
	var out []map[string]any
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	for pages := 0; ; pages++ {
		if pages > 10000 {
			t.Fatal("raw paging: more than 10000 pages; the continuation does not advance")
		}
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: q.Encode(), Header: header})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s()?%s: %d %s", table, q.Encode(), resp.StatusCode, truncate(resp.Body))
		}
		var body struct{ Value []map[string]any }
		d := json.NewDecoder(bytes.NewReader(resp.Body))
		d.UseNumber() // keep number literals as written, for type checks
		if err := d.Decode(&body); err != nil {
			t.Fatalf("page %s: %v", truncate(resp.Body), err)
		}
		out = append(out, body.Value...)
		npk, nrk := resp.Header.Get("x-ms-continuation-NextPartitionKey"), resp.Header.Get("x-ms-continuation-NextRowKey")
		if npk == "" {
			if nrk != "" {
				t.Errorf("a page carries NextRowKey %q without NextPartitionKey", nrk)
			}
			return out
		}
		q.Set("NextPartitionKey", npk)
		if nrk != "" {
			q.Set("NextRowKey", nrk)
		} else {
			q.Del("NextRowKey")
		}
	}
}

func keysOfMaps(entities []map[string]any) []string {
	out := make([]string, len(entities))
	for i, e := range entities {
		out[i] = fmt.Sprint(e["PartitionKey"]) + "/" + fmt.Sprint(e["RowKey"])
	}
	return out
}
