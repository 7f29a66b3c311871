package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/auth"
	"github.com/tablebridge/tablebridge/shared/batch"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// changesetBody is a $batch body holding one changeset of the embedded
// requests given (request line, headers, blank line, body), and its
// Content-Type.
func changesetBody(requests ...string) (contentType string, body []byte) {
	var b strings.Builder
	b.WriteString("--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n")
	for _, r := range requests {
		b.WriteString("--changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString(r + "\r\n")
	}
	b.WriteString("--changeset_c--\r\n--batch_b--\r\n")
	return "multipart/mixed; boundary=batch_b", []byte(b.String())
}

// queryBatchBody is a $batch body holding one lone request.
func queryBatchBody(request string) (contentType string, body []byte) {
	return "multipart/mixed; boundary=batch_b", []byte("--batch_b\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n" +
		request + "\r\n--batch_b--\r\n")
}

// resolveParts parses a $batch body and resolves each of its operations
// as the handler does, before authorization: the names of the operations,
// or the error of the first that fails.
func resolveParts(contentType string, body []byte) ([]string, error) {
	req, err := batch.ParseBytes(contentType, body)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := range req.Operations {
		part := &req.Operations[i]
		res, err := batchResource(part)
		if err != nil {
			return names, err
		}
		var op operation.Operation
		if req.IsQuery {
			op, err = resolvePart(res, part)
		} else {
			op, err = changesetOperation(res, part)
		}
		if err != nil {
			return names, err
		}
		names = append(names, op.String())
	}
	return names, nil
}

// walkHandler is the handler over an in-memory store holding the table
// "walk", and a function that sends it a signed $batch.
func walkHandler(t *testing.T) (*Handler, func(contentType string, body []byte) []byte) {
	t.Helper()
	st, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := tables.New(st, tables.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(svc, []auth.Account{auth.DevStoreAccount()}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(context.Background(), tables.Scope{Account: auth.DevStoreAccountName}, "walk"); err != nil {
		t.Fatal(err)
	}
	send := func(contentType string, body []byte) []byte {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:10002/devstoreaccount1/$batch", strings.NewReader(string(body)))
		r.Header.Set("x-ms-version", "2019-02-02")
		r.Header.Set("Content-Type", contentType)
		if err := auth.SignSharedKeyLite(r, auth.DevStoreAccountName, auth.DevStoreAccount().Keys[0]); err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != batch.StatusCode {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		return w.Body.Bytes()
	}
	return h, send
}

// TestChangesetCarriesEveryEntityWrite walks shared/operation's table:
// every entity write, sent in a changeset by each of its methods and, for
// an entity's, by POST with X-HTTP-Method, resolves to itself there and is
// applied through the handler, the service and the store as it is alone.
// An entity write operation the batch path cannot carry fails here, so
// adding one needs its table entry and its handler (endpoint), and nothing
// of the batch's own.
func TestChangesetCarriesEveryEntityWrite(t *testing.T) {
	t.Parallel()
	h, send := walkHandler(t)
	ctx := context.Background()
	sc := tables.Scope{Account: auth.DevStoreAccountName}
	walked := 0
	for _, op := range operation.All() {
		if !op.WritesEntity() {
			continue
		}
		r := op.Info().Request
		type variant struct{ name, verb, tunnel string }
		var variants []variant
		for _, m := range r.Methods {
			variants = append(variants, variant{m, m, ""})
			if r.Path == operation.PathEntity {
				variants = append(variants, variant{"POST as " + m, http.MethodPost, m})
			}
		}
		for _, v := range variants {
			t.Run(op.String()+"/"+v.name, func(t *testing.T) {
				walked++
				rk := strings.NewReplacer(" ", "-").Replace(op.String() + "-" + v.name)
				target := "http://127.0.0.1:10002/devstoreaccount1/walk"
				if r.Path == operation.PathEntity {
					target += "(PartitionKey='p',RowKey='" + rk + "')"
					// Update, Merge and Delete need the entity; the
					// upserts take it either way.
					if _, err := h.svc.WriteEntity(ctx, sc, "walk", tables.EntityWrite{Op: operation.InsertEntity,
						Body: []byte(`{"PartitionKey":"p","RowKey":"` + rk + `","Old":1}`)}); err != nil {
						t.Fatal(err)
					}
				}
				request := v.verb + " " + target + " HTTP/1.1\r\nContent-Type: application/json\r\n"
				if v.tunnel != "" {
					request += "X-HTTP-Method: " + v.tunnel + "\r\n"
				}
				if r.IfMatch != operation.IfMatchAbsent {
					request += "If-Match: *\r\n"
				}
				writesProperties := op != operation.DeleteEntity
				request += "\r\n"
				if writesProperties {
					request += `{"PartitionKey":"p","RowKey":"` + rk + `","New":"` + op.String() + `"}`
				}
				contentType, body := changesetBody(request)
				names, err := resolveParts(contentType, body)
				if err != nil || len(names) != 1 || names[0] != op.String() {
					t.Fatalf("resolved to %v, %v; want %s", names, err, op)
				}

				answer := send(contentType, body)
				if !strings.Contains(string(answer), "HTTP/1.1 20") {
					t.Fatalf("the changeset failed:\n%s", answer)
				}
				got, err := h.svc.GetEntity(ctx, sc, "walk", "p", rk)
				switch {
				case !writesProperties:
					if ae, ok := apierr.As(err); !ok || ae.Code != apierr.ResourceNotFound {
						t.Errorf("after %s: %v, %v; want it gone", op, got, err)
					}
				case err != nil || got.Properties["New"].Str != op.String():
					t.Errorf("after %s: %v, %v", op, got, err)
				}
			})
		}
	}
	if walked == 0 {
		t.Fatal("the table has no entity writes")
	}
}

// TestLoneQueryServesEveryEntityRead walks shared/operation's table: every
// entity read resolves to itself as a batch's lone GET, and answers 200;
// another GET is refused.
func TestLoneQueryServesEveryEntityRead(t *testing.T) {
	t.Parallel()
	h, send := walkHandler(t)
	sc := tables.Scope{Account: auth.DevStoreAccountName}
	if _, err := h.svc.WriteEntity(context.Background(), sc, "walk", tables.EntityWrite{Op: operation.InsertEntity,
		Body: []byte(`{"PartitionKey":"p","RowKey":"r"}`)}); err != nil {
		t.Fatal(err)
	}
	targets := map[operation.Path]string{operation.PathEntities: "walk()", operation.PathEntity: "walk(PartitionKey='p',RowKey='r')"}
	for _, op := range operation.All() {
		if !op.ReadsEntities() {
			continue
		}
		contentType, body := queryBatchBody("GET http://127.0.0.1:10002/devstoreaccount1/" + targets[op.Info().Request.Path] +
			" HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n")
		if names, err := resolveParts(contentType, body); err != nil || len(names) != 1 || names[0] != op.String() {
			t.Errorf("%s resolved to %v, %v", op, names, err)
		}
		if answer := send(contentType, body); !strings.Contains(string(answer), "HTTP/1.1 200 OK") {
			t.Errorf("%s answered:\n%s", op, answer)
		}
	}
	// Get Table ACL is a GET on the table's entities too, but no entity
	// read: the batch answers it as a failed part.
	contentType, body := queryBatchBody("GET http://127.0.0.1:10002/devstoreaccount1/walk?comp=acl HTTP/1.1\r\n\r\n")
	if answer := string(send(contentType, body)); !strings.Contains(answer, "HTTP/1.1 400 ") || !strings.Contains(answer, "InvalidInput") {
		t.Errorf("Get Table ACL alone in a batch answered:\n%s", answer)
	}
}

// TestBatchRefusesWhatAChangesetCannotCarry: the batch's own rules come
// before the answer the request would get alone, and an operation that is
// no entity write is refused; the rules a request of its own follows
// (If-None-Match) hold inside a changeset too.
func TestBatchRefusesWhatAChangesetCannotCarry(t *testing.T) {
	t.Parallel()
	const entity = "http://h/a/t(PartitionKey='p',RowKey='r')"
	tests := []struct {
		name, request string
		code          apierr.Code
		message       string
	}{
		{"insert on an entity", "POST " + entity + " HTTP/1.1\r\n\r\n{}", apierr.InvalidInput, "An insert must target the table, not an entity."},
		{"update on the table", "PUT http://h/a/t HTTP/1.1\r\nIf-Match: *\r\n\r\n{}", apierr.InvalidInput, "The operation must target an entity."},
		{"delete on the table", "DELETE http://h/a/t() HTTP/1.1\r\nIf-Match: *\r\n\r\n", apierr.InvalidInput, "The operation must target an entity."},
		{"tunnelled merge on the table", "POST http://h/a/t HTTP/1.1\r\nX-HTTP-Method: MERGE\r\n\r\n{}", apierr.InvalidInput, "The operation must target an entity."},
		{"Set Table ACL", "PUT http://h/a/t?comp=acl HTTP/1.1\r\n\r\n", apierr.InvalidInput, "The operation must target an entity."},
		{"a post with comp=acl", "POST http://h/a/t?comp=acl HTTP/1.1\r\n\r\n{}", apierr.UnsupportedHTTPVerb, ""},
		{"If-None-Match on a replace", "PUT " + entity + " HTTP/1.1\r\nIf-None-Match: *\r\n\r\n{}", apierr.InvalidInput,
			"If-None-Match HTTP header cannot be specified for PUT operations."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolveParts(changesetBody(tc.request))
			ae, ok := apierr.As(err)
			if !ok || ae.Code != tc.code || !strings.Contains(ae.Text(), tc.message) {
				t.Errorf("got %v, want %s %q", err, tc.code, tc.message)
			}
		})
	}
}

// TestSDKBatchesResolve: what each official SDK sends in a batch (the
// recordings and captures in shared/batch/testdata, the legacy Python
// SDK's origin-form request lines without Host included) resolves through
// shared/operation's table to the operations the SDK meant.
func TestSDKBatchesResolve(t *testing.T) {
	t.Parallel()
	tests := map[string][]operation.Operation{
		"go_all_actions.request": {operation.InsertEntity, operation.MergeEntity, operation.UpdateEntity, operation.InsertOrMergeEntity,
			operation.InsertOrReplaceEntity, operation.DeleteEntity, operation.DeleteEntity},
		"go_single_add.request":          {operation.InsertEntity},
		"js_create.request":              {operation.InsertEntity, operation.InsertEntity, operation.InsertEntity},
		"js_update.request":              {operation.UpdateEntity, operation.UpdateEntity, operation.UpdateEntity},
		"js_upsert.request":              {operation.InsertOrReplaceEntity, operation.InsertOrReplaceEntity, operation.InsertOrReplaceEntity, operation.InsertOrReplaceEntity},
		"js_delete_unclosed.request":     {operation.DeleteEntity, operation.DeleteEntity, operation.DeleteEntity},
		"node_legacy_content_id.request": {operation.InsertOrReplaceEntity, operation.InsertEntity, operation.InsertOrMergeEntity},
		"dotnet_mixed.request":           {operation.InsertEntity, operation.MergeEntity, operation.DeleteEntity},
		"python_mixed.request":           {operation.InsertEntity, operation.InsertOrReplaceEntity, operation.MergeEntity},
		"python_legacy_origin_form.request": {operation.InsertEntity, operation.DeleteEntity, operation.UpdateEntity, operation.MergeEntity,
			operation.InsertOrReplaceEntity, operation.InsertOrMergeEntity},
		"rest_reference_changeset.request": {operation.InsertEntity, operation.InsertEntity, operation.InsertOrMergeEntity},
		"rest_reference_query.request":     {operation.GetEntity},
	}
	for file, want := range tests {
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("..", "batch", "testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			// The batch boundary is the first line's, after "--".
			first, _, _ := strings.Cut(string(body), "\n")
			contentType := "multipart/mixed; boundary=" + strings.TrimPrefix(strings.TrimSpace(first), "--")
			got, err := resolveParts(contentType, body)
			if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("resolved to %v, %v; want %v", got, err, want)
			}
		})
	}
}

// TestQueryValue holds queryValue to url.Values.Get on the parsed query.
func TestQueryValue(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{
		"", "comp=acl", "%24format=application%2Fjson%3Bodata%3Dminimalmetadata", "comp=acl&comp=list", "%63omp=acl",
		"comp=%zz&comp=acl", "comp;x=1&comp=b", "a=1&&comp=+x+", "comp", "comp=", "restype=service&comp=properties",
		"c%zzomp=1&comp=2", strings.Repeat("x=1&", maxQueryScan) + "comp=acl",
	} {
		parsed, _ := url.ParseQuery(raw)
		for _, name := range []string{"comp", "restype", "$format"} {
			if got, want := queryValue(raw, name), parsed.Get(name); got != want {
				t.Errorf("queryValue(%.40q, %q) = %q, want %q", raw, name, got, want)
			}
		}
	}
}

// FuzzQueryValue: queryValue is url.Values.Get on any query.
func FuzzQueryValue(f *testing.F) {
	f.Add("comp=acl&%24format=x", "comp")
	f.Add("%63omp=acl;&comp=%2", "comp")
	f.Fuzz(func(t *testing.T, raw, name string) {
		parsed, _ := url.ParseQuery(raw)
		if got, want := queryValue(raw, name), parsed.Get(name); got != want {
			t.Errorf("queryValue(%q, %q) = %q, want %q", raw, name, got, want)
		}
	})
}
