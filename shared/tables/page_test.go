package tables

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/store"
)

// TestServiceNamesNoStoreType: the service's methods take and return its own
// types (EntityPage, Continuation, TablePage, TableInfo), never the store's,
// so the REST layer above it knows the Table service and not storage
// (docs/design.md, "Design"). New, which is handed the store, is not a
// method.
func TestServiceNamesNoStoreType(t *testing.T) {
	t.Parallel()
	storePkg := reflect.TypeFor[store.Store]().PkgPath()
	svc := reflect.TypeFor[*Service]()
	for i := range svc.NumMethod() {
		m := svc.Method(i)
		seen := map[reflect.Type]bool{}
		var walk func(reflect.Type)
		walk = func(ty reflect.Type) {
			if seen[ty] {
				return
			}
			seen[ty] = true
			if ty.PkgPath() == storePkg {
				t.Errorf("Service.%s names %s", m.Name, ty)
			}
			switch ty.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Array:
				walk(ty.Elem())
			case reflect.Map:
				walk(ty.Key())
				walk(ty.Elem())
			case reflect.Struct:
				// Unexported fields (Service.store) are the service's own
				// business; no caller sees them.
				for j := range ty.NumField() {
					if f := ty.Field(j); f.IsExported() {
						walk(f.Type)
					}
				}
			case reflect.Func:
				for j := range ty.NumIn() {
					walk(ty.In(j))
				}
				for j := range ty.NumOut() {
					walk(ty.Out(j))
				}
			}
		}
		walk(m.Type)
	}
}

// TestQueryEntitiesPages: a page that stops at $top names where the next one
// resumes, and that Continuation, sent back as After, gives the entities
// strictly after it; the last page has no Next.
func TestQueryEntitiesPages(t *testing.T) {
	t.Parallel()
	s := newBoltService(t, time.Now)
	ctx := context.Background()
	sc := Scope{Account: "acct"}
	if _, err := s.CreateTable(ctx, sc, "paged"); err != nil {
		t.Fatal(err)
	}
	for _, rk := range []string{"a", "b", "c"} {
		if _, err := s.WriteEntity(ctx, sc, "paged", insert(`{"PartitionKey":"p","RowKey":"`+rk+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	in := QueryInput{Table: "paged", Top: 2}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("no end after %d pages: %v", pages, got)
		}
		page, err := s.QueryEntities(ctx, sc, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			got = append(got, e.RowKey)
		}
		if page.Next == nil {
			break
		}
		in.After = page.Next
	}
	if want := []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("pages gave %v, want %v", got, want)
	}
}

// TestQueryTablesResumesInAnyCase: table names are case-insensitive, so a
// NextTableName resumes after the same table whatever its case (the REST
// layer may name the last table sent in its display case).
func TestQueryTablesResumesInAnyCase(t *testing.T) {
	t.Parallel()
	s := newBoltService(t, time.Now)
	ctx := context.Background()
	sc := Scope{Account: "acct"}
	for _, name := range []string{"Alpha", "Beta", "gamma"} {
		if _, err := s.CreateTable(ctx, sc, name); err != nil {
			t.Fatal(err)
		}
	}
	for _, after := range []string{"beta", "BETA", "Beta"} {
		page, err := s.QueryTables(ctx, sc, QueryTablesInput{NextTableName: after})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, ti := range page.Tables {
			got = append(got, ti.Name)
		}
		if want := []string{"gamma"}; !slices.Equal(got, want) || page.NextTableName != "" {
			t.Errorf("after %q: %v next %q, want %v and no next", after, got, page.NextTableName, want)
		}
	}
}
