package protocoltest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// suiteTransactions covers successful entity group transactions
// ("Performing entity group transactions"): every action the SDK can put
// in a changeset, the lone GET the SDK cannot send, the embedded responses
// on the wire, and isolation from concurrent readers.
func suiteTransactions(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()

	t.Run("EveryAction", func(t *testing.T) {
		c := newTable(t, sc, "")
		seeded := map[string]azcore.ETag{}
		for _, rk := range []string{"mergeETag", "mergeAny", "replaceETag", "replaceAny", "upsertMerge", "upsertReplace", "deleteETag", "deleteAny"} {
			seeded[rk] = addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": rk, "Old": "old", "Keep": 1}).ETag
		}
		newProps := func(rk string) []byte {
			return mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": rk, "New": "new"})
		}
		etag := func(rk string) *azcore.ETag { e := seeded[rk]; return &e }
		// aztables sends no If-Match for UpdateMerge and UpdateReplace
		// when IfMatch is nil, which makes them Insert Or Merge / Replace
		// on the wire; "*" is the unconditional update.
		actions := []aztables.TransactionAction{
			{ActionType: aztables.TransactionTypeAdd, Entity: newProps("added")},
			{ActionType: aztables.TransactionTypeUpdateMerge, Entity: newProps("mergeETag"), IfMatch: etag("mergeETag")},
			{ActionType: aztables.TransactionTypeUpdateMerge, Entity: newProps("mergeAny"), IfMatch: to.Ptr(azcore.ETagAny)},
			{ActionType: aztables.TransactionTypeUpdateReplace, Entity: newProps("replaceETag"), IfMatch: etag("replaceETag")},
			{ActionType: aztables.TransactionTypeUpdateReplace, Entity: newProps("replaceAny"), IfMatch: to.Ptr(azcore.ETagAny)},
			{ActionType: aztables.TransactionTypeInsertMerge, Entity: newProps("upsertMerge")},
			{ActionType: aztables.TransactionTypeInsertMerge, Entity: newProps("upsertMergeNew")},
			{ActionType: aztables.TransactionTypeInsertReplace, Entity: newProps("upsertReplace")},
			{ActionType: aztables.TransactionTypeInsertReplace, Entity: newProps("upsertReplaceNew")},
			{ActionType: aztables.TransactionTypeDelete, Entity: newProps("deleteETag"), IfMatch: etag("deleteETag")},
			{ActionType: aztables.TransactionTypeDelete, Entity: newProps("deleteAny")},
		}
		if _, err := c.SubmitTransaction(ctxFor(t), actions, nil); err != nil {
			t.Fatalf("SubmitTransaction: %v", err)
		}

		merged, replaced := "Keep=1;New=new;Old=old;", "New=new;"
		want := map[string]string{
			"added": replaced, "mergeETag": merged, "mergeAny": merged, "upsertMerge": merged,
			"replaceETag": replaced, "replaceAny": replaced, "upsertReplace": replaced,
			"upsertMergeNew": replaced, "upsertReplaceNew": replaced,
		}
		if got := userProps(t, c); !equalStringMaps(got, want) {
			t.Errorf("after the transaction:\n got %v\nwant %v", got, want)
		}
		for rk, before := range seeded {
			if strings.HasPrefix(rk, "delete") {
				continue
			}
			if _, after := getEDM(t, c, "p", rk); after == before {
				t.Errorf("%s: ETag %s did not change", rk, after)
			}
		}
	})

	t.Run("WireResponse", func(t *testing.T) {
		// What the SDK hides: each embedded response, in order, with the
		// status, ETag and Preference-Applied of its single-entity twin.
		c := newTable(t, sc, "")
		table := TableName(t, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"gone"}`)
		resp := srv.doBatch(t, []batchOp{
			{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"withContent","V":1}`)},
			{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"noContent"}`),
				Header: http.Header{"Prefer": {"return-no-content"}}},
			{Method: http.MethodPut, Path: entityPath(table, "p", "upserted"), Body: []byte(`{"V":2}`)},
			{Method: http.MethodDelete, Path: entityPath(table, "p", "gone"), Header: http.Header{"If-Match": {"*"}}},
		})
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("got %d %s, want 202", resp.StatusCode, truncate(resp.Body))
		}
		commonHeaders(t, resp)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/mixed; boundary=batchresponse_") {
			t.Errorf("Content-Type %q, want multipart/mixed; boundary=batchresponse_<id>", ct)
		}
		parts := parseBatchResponse(t, resp.Header.Get("Content-Type"), resp.Body)
		wantStatus := []int{http.StatusCreated, http.StatusNoContent, http.StatusNoContent, http.StatusNoContent}
		if len(parts) != len(wantStatus) {
			t.Fatalf("got %d parts, want %d", len(parts), len(wantStatus))
		}
		for i, p := range parts {
			if p.StatusCode != wantStatus[i] || !p.InChangeset {
				t.Errorf("part %d: %d (in changeset %v), want %d in the changeset", i, p.StatusCode, p.InChangeset, wantStatus[i])
			}
		}
		for i, rk := range []string{"withContent", "noContent", "upserted"} {
			if _, etag := getEDM(t, c, "p", rk); parts[i].Header.Get("ETag") != string(etag) {
				t.Errorf("part %d ETag %q, but %s now has %q", i, parts[i].Header.Get("ETag"), rk, etag)
			}
		}
		if body := decodeJSON(t, parts[0].Body); body["RowKey"] != "withContent" || fmt.Sprint(body["V"]) != "1" {
			t.Errorf("201 part body %s lacks the inserted entity", truncate(parts[0].Body))
		}
		if got := parts[1].Header.Get("Preference-Applied"); got != "return-no-content" {
			t.Errorf("Prefer: return-no-content insert answered Preference-Applied %q", got)
		}
		_, err := c.GetEntity(ctxFor(t), "p", "gone", nil)
		wantError(t, err, http.StatusNotFound, "ResourceNotFound")
	})

	t.Run("LoneGET", func(t *testing.T) {
		// "A query ... must be submitted singly in the batch"; aztables
		// has no way to send one, so these are raw.
		c := newTable(t, sc, "")
		table := TableName(t, "")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r1","V":1}`)
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r2","V":2}`)
		addEntity(t, c, `{"PartitionKey":"q","RowKey":"r3","V":3}`)
		_, etag := getEDM(t, c, "p", "r1")

		lone := func(t *testing.T, path string) BatchPart {
			t.Helper()
			resp := srv.doBatch(t, []batchOp{{Method: http.MethodGet, Path: path}})
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("got %d %s, want 202", resp.StatusCode, truncate(resp.Body))
			}
			parts := parseBatchResponse(t, resp.Header.Get("Content-Type"), resp.Body)
			if len(parts) != 1 || parts[0].InChangeset {
				t.Fatalf("got %d parts (in changeset %v), want one part directly in the batch", len(parts), len(parts) > 0 && parts[0].InChangeset)
			}
			return parts[0]
		}
		t.Run("PointRead", func(t *testing.T) {
			p := lone(t, entityPath(table, "p", "r1"))
			if p.StatusCode != http.StatusOK || p.Header.Get("ETag") != string(etag) {
				t.Errorf("got %d ETag %q, want 200 ETag %q", p.StatusCode, p.Header.Get("ETag"), etag)
			}
			if body := decodeJSON(t, p.Body); body["RowKey"] != "r1" || fmt.Sprint(body["V"]) != "1" {
				t.Errorf("body %s is not entity p/r1", truncate(p.Body))
			}
		})
		t.Run("Query", func(t *testing.T) {
			p := lone(t, "/"+table+"()?$filter="+url.QueryEscape("PartitionKey eq 'p'"))
			var body struct{ Value []json.RawMessage }
			if err := json.Unmarshal(p.Body, &body); p.StatusCode != http.StatusOK || err != nil {
				t.Fatalf("got %d %s (%v), want 200 with a value list", p.StatusCode, truncate(p.Body), err)
			}
			entities := make([][]byte, len(body.Value))
			for i, v := range body.Value {
				entities[i] = v
			}
			if got := strings.Join(keysOf(t, entities), ","); got != "p/r1,p/r2" {
				t.Errorf("query returned %s, want p/r1,p/r2", got)
			}
		})
		t.Run("Missing", func(t *testing.T) {
			p := lone(t, entityPath(table, "p", "nope"))
			var e struct {
				Err struct{ Code string } `json:"odata.error"`
			}
			if err := json.Unmarshal(p.Body, &e); err != nil || p.StatusCode != http.StatusNotFound || e.Err.Code != "ResourceNotFound" {
				t.Errorf("got %d %s, want 404 ResourceNotFound", p.StatusCode, truncate(p.Body))
			}
		})
	})

	t.Run("ReadersNeverSeeHalfABatch", func(t *testing.T) {
		// Atomicity seen from outside: while batches of 100 replace a whole
		// partition generation by generation, every query of that
		// partition must return all 100 rows of a single generation.
		c := newTable(t, sc, "")
		const rows, generations = 100, 12
		writeGeneration := func(gen int) error {
			actions := make([]aztables.TransactionAction, rows)
			for i := range actions {
				actions[i] = aztables.TransactionAction{ActionType: aztables.TransactionTypeInsertReplace,
					Entity: mustJSON(t, map[string]any{"PartitionKey": "gen", "RowKey": fmt.Sprintf("%03d", i), "Gen": gen})}
			}
			_, err := c.SubmitTransaction(ctxFor(t), actions, nil)
			return err
		}
		if err := writeGeneration(0); err != nil {
			t.Fatalf("generation 0: %v", err)
		}

		var (
			reads    atomic.Int64
			stop     atomic.Bool
			mu       sync.Mutex
			seen     = map[int]bool{}
			problems []string
			wg       sync.WaitGroup
		)
		filter := "PartitionKey eq 'gen'"
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					page, err := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter}).NextPage(ctxFor(t))
					problem := ""
					gens := map[int]int{}
					if err != nil {
						problem = err.Error()
					} else {
						for _, e := range page.Entities {
							var g struct{ Gen int }
							if err := json.Unmarshal(e, &g); err != nil {
								problem = err.Error()
							}
							gens[g.Gen]++
						}
						if len(page.Entities) != rows || len(gens) != 1 {
							problem = fmt.Sprintf("%d rows, generation counts %v", len(page.Entities), gens)
						}
					}
					mu.Lock()
					if problem != "" {
						problems = append(problems, problem)
					}
					for g := range gens {
						seen[g] = true
					}
					mu.Unlock()
					reads.Add(1)
					if problem != "" {
						return
					}
				}
			}()
		}
		for gen := 1; gen <= generations; gen++ {
			if err := writeGeneration(gen); err != nil {
				t.Errorf("generation %d: %v", gen, err)
				break
			}
			// Wait for three more reads: each of the two readers has at
			// most one read in flight from before this commit, so the third
			// started after it and must see exactly this generation.
			for r := reads.Load(); reads.Load() < r+3; {
				mu.Lock()
				failed := len(problems) > 0
				mu.Unlock()
				if failed {
					break
				}
				time.Sleep(time.Millisecond)
			}
		}
		stop.Store(true)
		wg.Wait()
		for _, p := range problems {
			t.Errorf("a reader saw a partial batch: %s", p)
		}
		for gen := 1; gen <= generations && len(problems) == 0; gen++ {
			if !seen[gen] {
				t.Errorf("no read saw generation %d (saw %v)", gen, sortedKeys(seen))
			}
		}
		t.Logf("%d reads saw generations %v", reads.Load(), sortedKeys(seen))
	})
}

// userProps returns each entity's custom properties as "name=value;" in
// name order, keyed by RowKey.
func userProps(t testing.TB, c *aztables.Client) map[string]string {
	t.Helper()
	entities, _ := listAll(t, c, nil)
	out := make(map[string]string, len(entities))
	for _, e := range entities {
		m := decodeJSON(t, e)
		var names []string
		for k := range m {
			if k == "PartitionKey" || k == "RowKey" || k == "Timestamp" || strings.HasPrefix(k, "odata.") || strings.Contains(k, "@odata.") {
				continue
			}
			names = append(names, k)
		}
		sort.Strings(names)
		var b strings.Builder
		for _, k := range names {
			fmt.Fprintf(&b, "%s=%v;", k, m[k])
		}
		out[fmt.Sprint(m["RowKey"])] = b.String()
	}
	return out
}

func equalStringMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}
