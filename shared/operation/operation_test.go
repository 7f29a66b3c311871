package operation

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestTable: every operation has a unique name, at least one route, and
// SAS letters from Azure's alphabets.
func TestTable(t *testing.T) {
	names := map[string]bool{}
	for _, op := range All() {
		i := op.Info()
		if i.Name == "" || names[i.Name] || op.String() != i.Name {
			t.Errorf("operation %d: name %q missing or repeated", op, i.Name)
		}
		names[i.Name] = true
		if len(op.Routes()) == 0 || len(i.Request.Methods) == 0 {
			t.Errorf("%s: no routes or no methods", op)
		}
		for _, s := range []*SAS{i.AccountSAS, i.TableSAS} {
			if s == nil {
				continue
			}
			if strings.Trim(s.Resources, "sco") != "" || len(s.Permissions) == 0 {
				t.Errorf("%s: SAS %+v", op, *s)
			}
			for _, p := range s.Permissions {
				if p == "" || strings.Trim(p, "rwdlacup") != "" {
					t.Errorf("%s: SAS permissions %q", op, p)
				}
			}
		}
		if i.Unauthorized && (i.AccountSAS != nil || i.TableSAS != nil || i.Token != RoleNone) {
			t.Errorf("%s: unauthorized, yet with permissions", op)
		}
	}
	if got := Operation(0).String(); got != "Unknown" {
		t.Errorf("Operation(0) = %q", got)
	}
	if GetTable.Authorization() != QueryTables || EntityGroupTransaction.Authorization() != 0 || InsertEntity.Authorization() != InsertEntity {
		t.Error("Authorization")
	}
}

// TestResolveIsUnambiguous: for every path shape, method, restype, comp
// and If-Match the table knows, at most one operation matches, so the
// table's order decides nothing; every operation but Preflight is found
// by its own Request.
func TestResolveIsUnambiguous(t *testing.T) {
	methods := []string{"MERGE"}
	comps := []string{"", "unknown"}
	restypes := []string{"", "unknown"}
	for _, op := range All() {
		r := op.Info().Request
		methods = append(methods, r.Methods...)
		comps = append(comps, r.Comp)
		restypes = append(restypes, r.Restype)
	}
	found := map[Operation]bool{}
	for path := PathService; path <= PathEntity; path++ {
		for _, m := range methods {
			for _, restype := range restypes {
				for _, comp := range comps {
					for _, ifMatch := range []bool{false, true} {
						var matches []Operation
						for _, op := range All() {
							if matchesAlone(op.Info().Request, path, m, restype, comp, ifMatch) {
								matches = append(matches, op)
							}
						}
						if len(matches) > 1 {
							t.Errorf("path %d %s restype=%q comp=%q If-Match %v: %v all match", path, m, restype, comp, ifMatch, matches)
						}
						if op, miss := Resolve(path, m, restype, comp, ifMatchHeader(ifMatch)); miss == Matched {
							found[op] = true
						}
					}
				}
			}
		}
	}
	for _, op := range All() {
		if op != Preflight && !found[op] {
			t.Errorf("%s is never resolved", op)
		}
	}
	if found[Preflight] {
		t.Error("Preflight was resolved from a URL")
	}
}

// matchesAlone is whether a request matches r by r's own fields, comp
// taken literally (Resolve also lets an entry without comp take an
// unclaimed one).
func matchesAlone(r Request, path Path, method, restype, comp string, ifMatch bool) bool {
	return r.Path == path && slices.Contains(r.Methods, method) && r.Restype == restype && r.Comp == comp &&
		(r.IfMatch == IfMatchAny || (r.IfMatch == IfMatchPresent) == ifMatch)
}

// ifMatchHeader is a request header with If-Match or without.
func ifMatchHeader(ifMatch bool) http.Header {
	if ifMatch {
		return http.Header{"If-Match": {"*"}}
	}
	return http.Header{}
}

func TestResolve(t *testing.T) {
	// Every operation's own Request resolves to it (Preflight's is no
	// path: the "no path" case below).
	for _, op := range All() {
		r := op.Info().Request
		for _, m := range r.Methods {
			if got, miss := Resolve(r.Path, m, r.Restype, r.Comp, ifMatchHeader(r.IfMatch == IfMatchPresent)); got != op && op != Preflight {
				t.Errorf("%s by %s: got %s %d", op, m, got, miss)
			}
		}
	}
	get, put, post := http.MethodGet, http.MethodPut, http.MethodPost
	tests := []struct {
		name          string
		path          Path
		method        string
		restype, comp string
		ifMatch       bool
		want          Operation
		wantMiss      Mismatch
	}{
		{"list tables ignores comp", PathTables, get, "", "acl", false, QueryTables, Matched},
		{"query entities, unknown comp", PathEntities, get, "", "list", false, QueryEntities, Matched},
		{"delete entity with If-Match", PathEntity, http.MethodDelete, "", "", true, DeleteEntity, Matched},
		{"put on tables", PathTables, put, "", "", false, 0, WrongMethod},
		{"post acl", PathEntities, post, "", "acl", false, 0, WrongMethod},
		{"post on entity", PathEntity, post, "", "", false, 0, WrongMethod},
		{"put stats", PathService, put, "service", "stats", false, 0, WrongMethod},
		{"service without restype", PathService, get, "", "properties", false, 0, WrongRestype},
		{"service, unknown comp", PathService, get, "service", "acl", false, 0, WrongComp},
		{"service without comp", PathService, get, "service", "", false, 0, WrongComp},
		{"no path", 0, http.MethodOptions, "", "", false, 0, WrongMethod},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			op, miss := Resolve(tc.path, tc.method, tc.restype, tc.comp, ifMatchHeader(tc.ifMatch))
			if op != tc.want || miss != tc.wantMiss {
				t.Errorf("got %s %d, want %s %d", op, miss, tc.want, tc.wantMiss)
			}
		})
	}
}

// TestStoreMethodsAreTheStores: every store method the table names is a
// method of store.Store. shared/deploy (IAM) and shared/lambdafn (the
// guard) check the other way, that they cover every method of it.
func TestStoreMethodsAreTheStores(t *testing.T) {
	st := reflect.TypeFor[store.Store]()
	for _, op := range All() {
		for _, m := range op.Info().Store {
			if _, ok := st.MethodByName(string(m)); !ok {
				t.Errorf("%s calls %s, which store.Store does not have", op, m)
			}
		}
	}
}

// TestBatchOperations: the entity writes are the six operations "Performing
// entity group transactions" lets a changeset carry, and the entity reads
// the two a batch may hold alone.
func TestBatchOperations(t *testing.T) {
	var writes, reads []Operation
	for _, op := range All() {
		if op.WritesEntity() {
			writes = append(writes, op)
		}
		if op.ReadsEntities() {
			reads = append(reads, op)
		}
	}
	wantWrites := []Operation{InsertEntity, UpdateEntity, MergeEntity, InsertOrReplaceEntity, InsertOrMergeEntity, DeleteEntity}
	if !slices.Equal(writes, wantWrites) {
		t.Errorf("entity writes %v, want %v", writes, wantWrites)
	}
	if want := []Operation{QueryEntities, GetEntity}; !slices.Equal(reads, want) {
		t.Errorf("entity reads %v, want %v", reads, want)
	}
	// What a batch may carry, its function (a Lambda's guard and IAM
	// follow the entry) may call.
	for _, op := range append(writes, reads...) {
		for _, m := range op.Info().Store {
			if !slices.Contains(EntityGroupTransaction.Info().Store, m) {
				t.Errorf("a batch may carry %s, which calls %s: EntityGroupTransaction's entry does not list it", op, m)
			}
		}
	}
}

// TestEffectiveMethod: X-HTTP-Method on a POST names the method; Azure's
// codes refuse it on another verb, twice, or naming a verb no entity
// operation tunnels.
func TestEffectiveMethod(t *testing.T) {
	tests := []struct {
		method string
		tunnel []string
		want   string
		code   apierr.Code
	}{
		{http.MethodGet, nil, http.MethodGet, ""},
		{"MERGE", nil, "MERGE", ""},
		{http.MethodPost, []string{" merge "}, "MERGE", ""},
		{http.MethodPost, []string{"DELETE"}, http.MethodDelete, ""},
		{http.MethodPost, []string{"put"}, http.MethodPut, ""},
		{http.MethodPost, []string{"PATCH"}, http.MethodPatch, ""},
		{http.MethodPut, []string{"MERGE"}, "", apierr.XMethodNotUsingPost},
		{http.MethodPost, []string{"MERGE", "PUT"}, "", apierr.XMethodIncorrectCount},
		{http.MethodPost, []string{"GET"}, "", apierr.XMethodIncorrectValue},
		{http.MethodPost, []string{"MERGE, PUT"}, "", apierr.XMethodIncorrectValue},
	}
	for _, tc := range tests {
		header := http.Header{}
		if tc.tunnel != nil {
			header["X-Http-Method"] = tc.tunnel
		}
		got, err := EffectiveMethod(tc.method, header)
		if got != tc.want || (err == nil) != (tc.code == "") || (err != nil && err.Code != tc.code) {
			t.Errorf("%s with X-HTTP-Method %q: %q, %v; want %q, %s", tc.method, tc.tunnel, got, err, tc.want, tc.code)
		}
	}
}
