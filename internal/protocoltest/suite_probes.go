package protocoltest

import (
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// suiteProbes replays what an attacker of a public endpoint would try
// (SECURITY.md, "Threat model"): each probe must get Azure's refusal and
// leave stored data as it was.
func suiteProbes(t *testing.T, newServer func(t *testing.T) *Server) {
	srv := newServer(t)
	sc := srv.Client()

	t.Run("SignatureReplayedOnAnotherWirePath", func(t *testing.T) {
		// 'x y' goes on the wire as x%20y, which is also the literal
		// spelling of the key 'x%20y' before that key is encoded (as
		// x%2520y). A signature covers the wire path only, so a request
		// signed for one entity never reaches the other.
		c := newTable(t, sc, "replay")
		table := TableName(t, "replay")
		addEntity(t, c, `{"PartitionKey":"x y","RowKey":"r","V":1}`)
		addEntity(t, c, `{"PartitionKey":"x%20y","RowKey":"r","V":2}`)
		before := snapshot(t, c)
		signedFor, replayedOn := entityPath(table, "x y", "r"), entityPath(table, "x%20y", "r")
		if signedFor != "/"+table+"(PartitionKey='x%20y',RowKey='r')" || replayedOn != "/"+table+"(PartitionKey='x%2520y',RowKey='r')" {
			t.Fatalf("entityPath no longer spells the probe: %s, %s", signedFor, replayedOn)
		}
		for _, tc := range []struct {
			signing Signing
			method  string
			header  http.Header
		}{
			{SharedKeyLite, http.MethodGet, nil},
			{SharedKey, http.MethodGet, nil},
			{SharedKeyLite, http.MethodDelete, http.Header{"If-Match": {"*"}}},
			{SharedKey, http.MethodDelete, http.Header{"If-Match": {"*"}}},
		} {
			req := srv.NewRequest(t, ctxFor(t), Request{Method: tc.method, Path: signedFor, Header: tc.header, Signing: tc.signing})
			replay := srv.NewRequest(t, ctxFor(t), Request{Method: tc.method, Path: replayedOn, Signing: Unsigned})
			replay.Header = req.Header.Clone()
			if wire := "/" + table + "(PartitionKey='x%2520y',RowKey='r')"; !strings.HasSuffix(replay.URL.EscapedPath(), wire) {
				t.Fatalf("the replay would go out as %s, not on %s", replay.URL.EscapedPath(), wire)
			}
			resp := srv.Send(t, replay)
			wantRawError(t, resp, http.StatusForbidden, "AuthenticationFailed")
			commonHeaders(t, resp)
			if tc.method != http.MethodGet {
				continue
			}
			// The signature itself was good: on the path it was made for,
			// the same request reads the entity it names.
			resp = srv.Send(t, req)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("signing %v: GET %s as signed: %d %s", tc.signing, signedFor, resp.StatusCode, truncate(resp.Body))
			}
			if got := decodeJSON(t, resp.Body)["V"]; fmt.Sprint(got) != "1" {
				t.Fatalf("signing %v: GET %s as signed read V %v, want 1", tc.signing, signedFor, got)
			}
		}
		unchanged(t, c, before)
		// The signature itself was good: on its own path it works.
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: replayedOn})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", replayedOn, resp.StatusCode, truncate(resp.Body))
		}
		if got := decodeJSON(t, resp.Body)["PartitionKey"]; got != "x%20y" {
			t.Fatalf("GET %s read PartitionKey %v, want x%%20y", replayedOn, got)
		}
	})

	t.Run("BatchOperationFramedOtherwise", func(t *testing.T) {
		// An operation whose headers frame its body otherwise than the
		// changeset does is refused with the whole batch: 400, not 202,
		// and nothing of the batch is applied.
		c := newTable(t, sc, "framing")
		table := TableName(t, "framing")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r","V":"original"}`)
		before := snapshot(t, c)
		body := []byte(`{"V":"overwritten"}`) // 19 bytes, as in the probe
		insert := batchOp{Method: http.MethodPost, Path: "/" + table, Body: []byte(`{"PartitionKey":"p","RowKey":"new"}`),
			Header: http.Header{"Prefer": {"return-no-content"}}}
		for _, header := range []http.Header{
			{"Content-Length": {"999999"}},
			{"Content-Length": {"5"}},
			{"Content-Length": {"19", "20"}},
			{"Transfer-Encoding": {"chunked"}},
		} {
			put := batchOp{Method: http.MethodPut, Path: entityPath(table, "p", "r"), Header: header, Body: body}
			resp := srv.doBatch(t, []batchOp{insert, put})
			wantRawError(t, resp, http.StatusBadRequest, "InvalidInput")
			commonHeaders(t, resp)
			unchanged(t, c, before)
		}
		// The same batch framed right goes through.
		put := batchOp{Method: http.MethodPut, Path: entityPath(table, "p", "r"), Header: http.Header{"Content-Length": {"19"}}, Body: body}
		resp := srv.doBatch(t, []batchOp{insert, put})
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("framed batch: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		for _, part := range parseBatchResponse(t, resp.Header.Get("Content-Type"), resp.Body) {
			if part.StatusCode != http.StatusNoContent {
				t.Fatalf("framed batch: a part answered %d: %s", part.StatusCode, truncate(part.Body))
			}
		}
		if e, _ := getEDM(t, c, "p", "r"); e.Properties["V"] != "overwritten" {
			t.Fatalf("framed batch left V = %v", e.Properties["V"])
		}
	})

	t.Run("ForgedContinuation", func(t *testing.T) {
		// Continuation tokens come back from clients: a forged or corrupt
		// one is 400 InvalidInput, and one that is well formed but names
		// a position past the data is an empty last page, never a 5xx.
		c := newTable(t, sc, "forged")
		table := TableName(t, "forged")
		long := strings.Repeat("x", 1024) // the longest RowKey DynamoDB indexes
		for _, rk := range []string{"a", long, "y"} {
			addEntity(t, c, map[string]any{"PartitionKey": "p", "RowKey": rk})
		}
		before := snapshot(t, c)
		token := func(key string) string {
			enc := base64.RawURLEncoding.EncodeToString([]byte(key))
			return "1!" + strconv.Itoa(len(enc)) + "!" + enc
		}
		inP := url.Values{"$filter": {"PartitionKey eq 'p'"}}
		for name, q := range map[string]url.Values{
			"NextRowKey of 2,000 bytes":       {"NextPartitionKey": {token("p")}, "NextRowKey": {token(strings.Repeat("x", 2000))}},
			"NextPartitionKey not a token":    {"NextPartitionKey": {"p"}},
			"NextPartitionKey with a NUL":     {"NextPartitionKey": {token("p\x00")}},
			"NextRowKey with a slash":         {"NextPartitionKey": {token("p")}, "NextRowKey": {token("a/b")}},
			"NextRowKey with bad base64":      {"NextPartitionKey": {token("p")}, "NextRowKey": {"1!4!@@@@"}},
			"NextPartitionKey of 3,000 bytes": {"NextPartitionKey": {token(strings.Repeat("é", 1500))}},
		} {
			for _, filtered := range []bool{true, false} {
				if filtered {
					q.Set("$filter", inP.Get("$filter"))
				} else {
					q.Del("$filter")
				}
				resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: q.Encode()})
				if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidInput" {
					t.Errorf("%s (filtered %v): %d %s %s", name, filtered, resp.StatusCode, resp.Header.Get("x-ms-error-code"), truncate(resp.Body))
				}
				commonHeaders(t, resp)
			}
		}
		for name, tok := range map[string]string{
			"not a token":                "mytable",
			"empty name":                 token(""),
			"name of 3,000 characters":   token(strings.Repeat("z", 3000)),
			"name with a NUL":            token("zzz\x00"),
			"name no table can have":     token("~~~"),
			"non-canonical base64":       "1!2!YR",
			"length that does not match": "1!9!YWJj",
		} {
			resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables", RawQuery: url.Values{"NextTableName": {tok}}.Encode()})
			if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("x-ms-error-code") != "InvalidInput" {
				t.Errorf("NextTableName %s: %d %s %s", name, resp.StatusCode, resp.Header.Get("x-ms-error-code"), truncate(resp.Body))
			}
		}
		// Well formed, past everything: an empty last page.
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables", RawQuery: url.Values{"NextTableName": {token("zzzzzzzzzz")}}.Encode()})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("x-ms-continuation-NextTableName") != "" {
			t.Errorf("NextTableName past the last table: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		// Keys and $filter literals at and past DynamoDB's key limits page
		// through exactly, one entity a page.
		for filter, want := range map[string][]string{
			"PartitionKey eq 'p'": {"a", long, "y"},
			"PartitionKey eq 'p' and RowKey gt '" + strings.Repeat("x", 2000) + "'": {"y"},
			"PartitionKey eq 'p' and RowKey le '" + strings.Repeat("x", 2000) + "'": {"a", long},
			"PartitionKey eq '" + strings.Repeat("é", 1500) + "'":                   nil,
		} {
			top := int32(1)
			entities, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: &filter, Top: &top})
			if got := keysOf(t, entities); !slices.Equal(got, prefixed("p/", want)) {
				t.Errorf("%.60s: got %v, want %v", filter, got, want)
			}
		}
		unchanged(t, c, before)
	})

	t.Run("AccountNameInAnotherCase", func(t *testing.T) {
		// Account names are lower-case on Azure and host names ignore
		// case: any spelling addresses the one account, path-style and
		// host-style alike, never a namespace of its own.
		key := srv.Account(t, auth.DevStoreAccountName).Keys[0]
		send := func(t *testing.T, req *http.Request) *Response {
			t.Helper()
			if err := auth.SignSharedKeyLite(req, auth.DevStoreAccountName, key); err != nil {
				t.Fatal(err)
			}
			return srv.Send(t, req)
		}
		created := TableName(t, "upper")
		req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodPost, Path: "/Tables", Account: "DEVSTOREACCOUNT1", Signing: Unsigned,
			Body: []byte(`{"TableName":"` + created + `"}`), Header: http.Header{"Prefer": {"return-no-content"}}})
		if resp := send(t, req); resp.StatusCode != http.StatusNoContent {
			t.Fatalf("create table through /DEVSTOREACCOUNT1: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		t.Cleanup(func() { _, _ = sc.DeleteTable(ctxFor(t), created, nil) })
		if _, err := sc.NewClient(created).GetAccessPolicy(ctxFor(t), nil); err != nil {
			t.Fatalf("the table created through /DEVSTOREACCOUNT1 is not in devstoreaccount1: %v", err)
		}
		c := newTable(t, sc, "lower")
		table := TableName(t, "lower")
		addEntity(t, c, `{"PartitionKey":"p","RowKey":"r"}`)
		for _, tc := range []struct {
			name, account, host string
		}{
			{"path-style", "DevStoreAccount1", ""},
			{"host-style", "", "DevStoreAccount1.table.localhost"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				req := srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodGet, Path: entityPath(table, "p", "r"), Account: tc.account, Signing: Unsigned})
				if tc.host != "" {
					req = srv.NewRequest(t, ctxFor(t), Request{Method: http.MethodGet, Signing: Unsigned})
					u := *req.URL
					u.Path = entityPath(table, "p", "r")
					u.RawPath = ""
					req.URL = &u
					req.Host = tc.host
				}
				resp := send(t, req)
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s (Host %s): %d %s", req.URL.Path, req.Host, resp.StatusCode, truncate(resp.Body))
				}
			})
		}
	})

	t.Run("OversizeURLAndHeaders", func(t *testing.T) {
		// Azure's error shape, with x-ms-request-id, for what is too long
		// to serve: past httpapi.MaxURLBytes of URL, 414 InvalidUri; past
		// httpapi.MaxHeaderBytes of headers, 400 InvalidHeaderValue.
		table := TableName(t, "oversize")
		filter := url.Values{"$filter": {"PartitionKey eq '" + strings.Repeat("x", 100_000) + "'"}}.Encode()
		resp := srv.Do(t, Request{Method: http.MethodGet, Path: "/" + table + "()", RawQuery: filter})
		wantRawError(t, resp, http.StatusRequestURITooLong, "InvalidUri")
		commonHeaders(t, resp)
		resp = srv.Do(t, Request{Method: http.MethodGet, Path: "/Tables", Header: http.Header{"X-Padding": {strings.Repeat("p", 70<<10)}}})
		wantRawError(t, resp, http.StatusBadRequest, "InvalidHeaderValue")
		commonHeaders(t, resp)
		// The same $filter moved into a batch body is held to the same limit.
		resp = srv.doBatch(t, []batchOp{{Method: http.MethodGet, Path: "/" + table + "()?" + filter}})
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("batch query: %d %s", resp.StatusCode, truncate(resp.Body))
		}
		parts := parseBatchResponse(t, resp.Header.Get("Content-Type"), resp.Body)
		if len(parts) != 1 || parts[0].StatusCode != http.StatusRequestURITooLong || !strings.Contains(string(parts[0].Body), `"InvalidUri"`) {
			t.Fatalf("batch query with a long $filter: %+v", parts)
		}
	})

	t.Run("ContentMD5OtherThanTheBody", func(t *testing.T) {
		// Shared Key signs Content-MD5, not the body: the body must match
		// it, or the request is refused and nothing is stored.
		c := newTable(t, sc, "md5")
		table := TableName(t, "md5")
		before := snapshot(t, c)
		entity := []byte(`{"PartitionKey":"p","RowKey":"r"}`)
		sum := md5.Sum(entity)
		other := md5.Sum([]byte("another body"))
		for _, tc := range []struct {
			md5, code string
			status    int
		}{
			{base64.StdEncoding.EncodeToString(other[:]), "Md5Mismatch", http.StatusBadRequest},
			{"not-base64!", "InvalidHeaderValue", http.StatusBadRequest},
			{base64.StdEncoding.EncodeToString(sum[:8]), "InvalidHeaderValue", http.StatusBadRequest},
		} {
			resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/" + table, Body: entity, Signing: SharedKey,
				Header: http.Header{"Content-MD5": {tc.md5}, "Prefer": {"return-no-content"}}})
			wantRawError(t, resp, tc.status, tc.code)
			ct, batchBody := srv.batchBody([]batchOp{{Method: http.MethodPost, Path: "/" + table, Body: entity}})
			resp = srv.Do(t, Request{Method: http.MethodPost, Path: "/$batch", Body: batchBody, Signing: SharedKey,
				Header: http.Header{"Content-Type": {ct}, "Content-MD5": {tc.md5}}})
			wantRawError(t, resp, tc.status, tc.code)
		}
		unchanged(t, c, before)
		resp := srv.Do(t, Request{Method: http.MethodPost, Path: "/" + table, Body: entity, Signing: SharedKey,
			Header: http.Header{"Content-MD5": {base64.StdEncoding.EncodeToString(sum[:])}, "Prefer": {"return-no-content"}}})
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("insert with its own Content-MD5: %d %s", resp.StatusCode, truncate(resp.Body))
		}
	})
}

func prefixed(prefix string, keys []string) []string {
	out := []string{}
	for _, k := range keys {
		out = append(out, prefix+k)
	}
	return out
}
