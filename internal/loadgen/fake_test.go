package loadgen

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// fakeTables is just enough of the Table service for the bench's requests,
// with its own SharedKeyLite check (written from the Azure spec, not with
// the bench's signer) and hooks to inject failures. It is deliberately
// simple: one account, string keys, no types.
type fakeTables struct {
	key      []byte
	pageSize int

	mu     sync.Mutex
	tables map[string]map[string]map[string][]byte // table -> PK -> RK -> entity
	counts map[string]int                          // requests per operation
	// fault, when set, may answer a request instead of the fake: it gets
	// the operation name and its 1-based count.
	fault func(op string, n int, w http.ResponseWriter) bool
	// onRequest runs before each request is served.
	onRequest func(op string, n int)
}

func newFakeTables(t *testing.T) (*fakeTables, string) {
	t.Helper()
	f := &fakeTables{key: auth.DevStoreAccount().Keys[0], pageSize: 1000, tables: map[string]map[string]map[string][]byte{}, counts: map[string]int{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv.URL + "/" + auth.DevStoreAccountName
}

var (
	tableByName  = regexp.MustCompile(`^/Tables\('([A-Za-z0-9]+)'\)$`)
	entityByKeys = regexp.MustCompile(`^/([A-Za-z0-9]+)\(PartitionKey='([^']*)',RowKey='([^']*)'\)$`)
	queryTable   = regexp.MustCompile(`^/([A-Za-z0-9]+)\(\)$`)
	insertTable  = regexp.MustCompile(`^/([A-Za-z0-9]+)$`)
	pkFilter     = regexp.MustCompile(`^PartitionKey eq '([^']*)'$`)
)

func (f *fakeTables) authorized(r *http.Request) bool {
	// Shared Key Lite for the Table service: Date + "\n" +
	// CanonicalizedResource, the resource being /account + the encoded path.
	msg := r.Header.Get("x-ms-date") + "\n/" + auth.DevStoreAccountName + r.URL.EscapedPath()
	if comp := r.URL.Query().Get("comp"); comp != "" {
		msg += "?comp=" + comp
	}
	mac := hmac.New(sha256.New, f.key)
	mac.Write([]byte(msg))
	want := "SharedKeyLite " + auth.DevStoreAccountName + ":" + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return hmac.Equal([]byte(r.Header.Get("Authorization")), []byte(want))
}

func fakeError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("x-ms-error-code", code)
	w.Header().Set("Content-Type", "application/json;odata=minimalmetadata")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"odata.error":{"code":%q,"message":{"lang":"en-US","value":"fake %s\nRequestId:1\nTime:2"}}}`, code, code)
}

func (f *fakeTables) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path, ok := strings.CutPrefix(r.URL.Path, "/"+auth.DevStoreAccountName)
	if !ok {
		fakeError(w, http.StatusBadRequest, "InvalidUri")
		return
	}
	op := r.Method + " other"
	switch {
	case r.Method == http.MethodPost && path == "/Tables":
		op = "create table"
	case r.Method == http.MethodDelete && tableByName.MatchString(path):
		op = "delete table"
	case r.Method == http.MethodPost && path == "/$batch":
		op = "batch"
	case r.Method == http.MethodGet && entityByKeys.MatchString(path):
		op = "get"
	case r.Method == http.MethodGet && queryTable.MatchString(path):
		op = "query"
	case r.Method == http.MethodPost && insertTable.MatchString(path):
		op = "insert"
	}
	f.mu.Lock()
	f.counts[op]++
	n := f.counts[op]
	hook, fault := f.onRequest, f.fault
	f.mu.Unlock()
	if hook != nil {
		hook(op, n)
	}
	if !f.authorized(r) {
		fakeError(w, http.StatusForbidden, "AuthenticationFailed")
		return
	}
	if fault != nil && fault(op, n, w) {
		return
	}
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	switch op {
	case "create table":
		var req struct{ TableName string }
		json.Unmarshal(body, &req)
		if _, exists := f.tables[req.TableName]; exists {
			fakeError(w, http.StatusConflict, "TableAlreadyExists")
			return
		}
		f.tables[req.TableName] = map[string]map[string][]byte{}
		w.WriteHeader(http.StatusNoContent)
	case "delete table":
		name := tableByName.FindStringSubmatch(path)[1]
		if _, exists := f.tables[name]; !exists {
			fakeError(w, http.StatusNotFound, "TableNotFound")
			return
		}
		delete(f.tables, name)
		w.WriteHeader(http.StatusNoContent)
	case "insert":
		table := f.tables[insertTable.FindStringSubmatch(path)[1]]
		if status, code := f.insertLocked(table, body); status != http.StatusCreated {
			fakeError(w, status, code)
			return
		}
		w.WriteHeader(http.StatusCreated)
		w.Write(body)
	case "get":
		m := entityByKeys.FindStringSubmatch(path)
		entity, ok := f.tables[m[1]][m[2]][m[3]]
		if !ok {
			fakeError(w, http.StatusNotFound, "ResourceNotFound")
			return
		}
		w.Write(entity)
	case "query":
		f.queryLocked(w, r, f.tables[queryTable.FindStringSubmatch(path)[1]])
	case "batch":
		f.batchLocked(w, r, body)
	default:
		fakeError(w, http.StatusNotImplemented, "NotImplemented")
	}
}

func (f *fakeTables) insertLocked(table map[string]map[string][]byte, entity []byte) (int, string) {
	if table == nil {
		return http.StatusNotFound, "TableNotFound"
	}
	var keys struct{ PartitionKey, RowKey string }
	if err := json.Unmarshal(entity, &keys); err != nil {
		return http.StatusBadRequest, "InvalidInput"
	}
	if table[keys.PartitionKey] == nil {
		table[keys.PartitionKey] = map[string][]byte{}
	}
	if _, exists := table[keys.PartitionKey][keys.RowKey]; exists {
		return http.StatusConflict, "EntityAlreadyExists"
	}
	table[keys.PartitionKey][keys.RowKey] = entity
	return http.StatusCreated, ""
}

func (f *fakeTables) queryLocked(w http.ResponseWriter, r *http.Request, table map[string]map[string][]byte) {
	q := r.URL.Query()
	m := pkFilter.FindStringSubmatch(q.Get("$filter"))
	if table == nil || m == nil {
		fakeError(w, http.StatusBadRequest, "InvalidInput")
		return
	}
	partition := table[m[1]]
	var rks []string
	for rk := range partition {
		if q.Get("NextPartitionKey") == "" || rk >= q.Get("NextRowKey") {
			rks = append(rks, rk)
		}
	}
	sort.Strings(rks)
	if len(rks) > f.pageSize {
		w.Header().Set("x-ms-continuation-NextPartitionKey", m[1])
		w.Header().Set("x-ms-continuation-NextRowKey", rks[f.pageSize])
		rks = rks[:f.pageSize]
	}
	var page [][]byte
	for _, rk := range rks {
		page = append(page, partition[rk])
	}
	fmt.Fprintf(w, `{"odata.metadata":"fake","value":[%s]}`, bytes.Join(page, []byte(",")))
}

// batchLocked applies a changeset of inserts atomically and answers as
// Azure does: 202, one response part per operation, or a single failing
// part.
func (f *fakeTables) batchLocked(w http.ResponseWriter, r *http.Request, body []byte) {
	_, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		fakeError(w, http.StatusBadRequest, "InvalidInput")
		return
	}
	outer := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	part, err := outer.NextPart()
	if err != nil {
		fakeError(w, http.StatusBadRequest, "InvalidInput")
		return
	}
	_, csParams, _ := mime.ParseMediaType(part.Header.Get("Content-Type"))
	inner := multipart.NewReader(part, csParams["boundary"])
	staged := map[string]map[string]map[string][]byte{}
	var n int
	var failure string
	for ; ; n++ {
		p, err := inner.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			fakeError(w, http.StatusBadRequest, "InvalidInput")
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(p))
		if err != nil {
			fakeError(w, http.StatusBadRequest, "InvalidInput")
			return
		}
		u, _ := url.Parse(req.RequestURI)
		name := strings.TrimPrefix(strings.TrimPrefix(u.Path, "/"+auth.DevStoreAccountName), "/")
		entity, _ := io.ReadAll(req.Body)
		if staged[name] == nil {
			staged[name] = clonePartitions(f.tables[name])
		}
		if failure == "" {
			if status, code := f.insertLocked(staged[name], entity); status != http.StatusCreated {
				failure = fmt.Sprintf("HTTP/1.1 %d %s\r\n\r\n{\"odata.error\":{\"code\":%q,\"message\":{\"lang\":\"en-US\",\"value\":\"%d:fake\"}}}\r\n",
					status, http.StatusText(status), code, n)
			}
		}
	}
	w.Header().Set("Content-Type", "multipart/mixed; boundary=batchresponse_x")
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "--batchresponse_x\r\nContent-Type: multipart/mixed; boundary=changesetresponse_y\r\n\r\n")
	part1 := "--changesetresponse_y\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n"
	if failure != "" {
		io.WriteString(w, part1+failure)
	} else {
		for name, table := range staged {
			f.tables[name] = table
		}
		for range n {
			io.WriteString(w, part1+"HTTP/1.1 204 No Content\r\nDataServiceVersion: 3.0;\r\n\r\n")
		}
	}
	io.WriteString(w, "--changesetresponse_y--\r\n--batchresponse_x--\r\n")
}

func clonePartitions(t map[string]map[string][]byte) map[string]map[string][]byte {
	if t == nil {
		return nil
	}
	out := make(map[string]map[string][]byte, len(t))
	for pk, rows := range t {
		out[pk] = make(map[string][]byte, len(rows))
		for rk, e := range rows {
			out[pk][rk] = e
		}
	}
	return out
}

// rowsWithPrefix counts the stored entities whose PartitionKey starts with
// prefix, over all tables.
func (f *fakeTables) rowsWithPrefix(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, table := range f.tables {
		for pk, rows := range table {
			if strings.HasPrefix(pk, prefix) {
				n += len(rows)
			}
		}
	}
	return n
}

func (f *fakeTables) count(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

func (f *fakeTables) tableCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.tables)
}
