package deploy

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
)

func TestMatchResource(t *testing.T) {
	tests := []struct {
		path         string
		wantResource string
		wantParams   map[string]string
	}{
		{"/acct", operation.ResourceAccount, map[string]string{"account": "acct"}},
		{"/acct/", operation.ResourceAccount, map[string]string{"account": "acct"}},
		{"/acct/Tables", operation.ResourceTables, map[string]string{"account": "acct"}},
		{"/acct/Tables/", operation.ResourceTables, map[string]string{"account": "acct"}},
		{"/acct/tables", operation.ResourceAny, map[string]string{"account": "acct", "resource": "tables"}},
		{"/acct/Tables('t')", operation.ResourceAny, map[string]string{"account": "acct", "resource": "Tables('t')"}},
		{"/acct/$batch", operation.ResourceAny, map[string]string{"account": "acct", "resource": "$batch"}},
		{"/acct/t(PartitionKey='a%20b',RowKey='%E2%9C%93')", operation.ResourceAny,
			map[string]string{"account": "acct", "resource": "t(PartitionKey='a b',RowKey='✓')"}},
		{"/", "", nil},
		{"/acct/t/extra", "", nil},
		{"/acct//t", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			res, params, ok := matchResource(tc.path)
			if ok != (tc.wantResource != "") || res != tc.wantResource || !maps.Equal(params, tc.wantParams) {
				t.Errorf("got %q %v %v, want %q %v", res, params, ok, tc.wantResource, tc.wantParams)
			}
		})
	}
}

func TestRouteFor(t *testing.T) {
	tests := []struct {
		method, path string
		wantFn       string
		wantMethod   string
	}{
		{"GET", "/acct/Tables", "querytables", "GET"},
		{"POST", "/acct/Tables", "createtable", "POST"},
		{"OPTIONS", "/acct/Tables", "preflight", "OPTIONS"},
		{"GET", "/acct/t()", "readresource", "GET"},
		{"HEAD", "/acct/t", "readresource", "HEAD"},
		{"POST", "/acct/$batch", "insertorbatch", "POST"},
		{"PUT", "/acct/t(PartitionKey='a',RowKey='b')", "updateentity", "PUT"},
		{"PATCH", "/acct/t(PartitionKey='a',RowKey='b')", "mergeentity", "PATCH"},
		{"MERGE", "/acct/t(PartitionKey='a',RowKey='b')", "mergeentity", operation.MethodAny},
		{"DELETE", "/acct/Tables('t')", "deleteresource", "DELETE"},
		{"GET", "/acct/", "getservice", "GET"},
		{"PUT", "/acct", "setserviceproperties", "PUT"},
		{"OPTIONS", "/acct", "preflight", "OPTIONS"},
		{"DELETE", "/acct/Tables", "", ""},
		{"PATCH", "/acct", "", ""},
		{"GET", "/", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			fn, route, _, ok := RouteFor(tc.method, tc.path)
			if ok != (tc.wantFn != "") || fn.Name != tc.wantFn || route.Method != tc.wantMethod {
				t.Errorf("got %s %s %v, want %s %s", fn.Name, route, ok, tc.wantFn, tc.wantMethod)
			}
		})
	}
}

// TestFunctionsAreConsistent: every function's operations are served by
// the store methods it may call, and every store method has IAM actions.
func TestFunctionsAreConsistent(t *testing.T) {
	seen := map[string]bool{}
	for _, fn := range Functions() {
		if seen[fn.Name] || seen[fn.LogicalID] {
			t.Errorf("duplicate function %s / %s", fn.Name, fn.LogicalID)
		}
		seen[fn.Name], seen[fn.LogicalID] = true, true
		if len(fn.Routes) == 0 && !fn.CatchAll || len(fn.Operations) == 0 {
			t.Errorf("%s has no routes or no operations", fn.Name)
		}
		for _, m := range fn.StoreMethods() {
			if _, ok := storeActions[m]; !ok {
				t.Errorf("%s: store method %s has no IAM actions", fn.Name, m)
			}
		}
		catalog, data := fn.DynamoDBActions()
		for _, a := range append(catalog, data...) {
			if !strings.HasPrefix(a, "dynamodb:") || strings.Contains(a, "*") {
				t.Errorf("%s: action %q", fn.Name, a)
			}
		}
	}
	if _, err := FunctionByName("nope"); err == nil {
		t.Error("FunctionByName found a function that does not exist")
	}
}

// TestEveryStoreMethodHasIAMActions: storeActions names exactly the methods
// of store.Store (but Close, which calls no DynamoDB), so a store method
// added to the interface needs its IAM actions here before any function
// may call it.
func TestEveryStoreMethodHasIAMActions(t *testing.T) {
	st := reflect.TypeFor[store.Store]()
	for i := range st.NumMethod() {
		m := operation.StoreMethod(st.Method(i).Name)
		if _, ok := storeActions[m]; !ok && m != "Close" {
			t.Errorf("store.Store's %s has no IAM actions in storeActions", m)
		}
	}
	for m := range storeActions {
		if _, ok := st.MethodByName(string(m)); !ok {
			t.Errorf("storeActions names %s, which store.Store does not have", m)
		}
	}
}
