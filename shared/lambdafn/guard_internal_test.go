package lambdafn

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/memstore"
)

// TestGuardChecksEveryStoreMethod: the guard wraps every method of
// store.Store (a missing one would not compile), and each asks for its
// own name: refused with 405 when the function may not call it, passed on
// when it may. Close is the guard's own.
func TestGuardChecksEveryStoreMethod(t *testing.T) {
	next, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, allowed ...operation.StoreMethod) error {
		g := &guardStore{next: next, fn: "somefunction", allowed: allowed}
		m := reflect.ValueOf(g).MethodByName(name)
		args := make([]reflect.Value, m.Type().NumIn())
		for i := range args {
			args[i] = reflect.Zero(m.Type().In(i))
		}
		args[0] = reflect.ValueOf(context.Background())
		out := m.Call(args)
		err, _ := out[len(out)-1].Interface().(error)
		return err
	}
	st := reflect.TypeFor[store.Store]()
	for i := range st.NumMethod() {
		name := st.Method(i).Name
		if name == "Close" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			others := []operation.StoreMethod{operation.StoreGetTable, operation.StoreWrite}
			if name == string(operation.StoreGetTable) || name == string(operation.StoreWrite) {
				others = []operation.StoreMethod{operation.StoreQueryTables}
			}
			err := call(name, others...)
			if e, ok := apierr.As(err); !ok || e.Code != apierr.MethodNotAllowed || !strings.Contains(err.Error(), "store's "+name+")") {
				t.Fatalf("not allowed: got %v, want MethodNotAllowed naming %s", err, name)
			}
			if e, ok := apierr.As(call(name, operation.StoreMethod(name))); ok && e.Code == apierr.MethodNotAllowed {
				t.Fatalf("allowed: refused with %v", e)
			}
		})
	}
}
