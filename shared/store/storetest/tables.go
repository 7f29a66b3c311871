package storetest

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

func (s suite) testTables(t *testing.T) {
	f := s.fixture(t)

	t.Run("CreateKeepsCaseAndGetIgnoresIt", func(t *testing.T) {
		name := "MiXeD" + tableName(t.Name(), 0)
		info := f.createTable(f.account, name)
		if info.Name != name {
			t.Errorf("CreateTable returned Name %q; want %q", info.Name, name)
		}
		for _, lookup := range []string{name, strings.ToLower(name), strings.ToUpper(name)} {
			got, err := f.s.GetTable(f.ctx, f.account, lookup)
			if err != nil {
				t.Fatalf("GetTable(%q): %v", lookup, err)
			}
			if got.Name != name {
				t.Errorf("GetTable(%q).Name = %q; want the created case %q", lookup, got.Name, name)
			}
			if len(got.ACL) != 0 {
				t.Errorf("GetTable(%q).ACL = %v; want none for a new table", lookup, got.ACL)
			}
		}
	})

	t.Run("CreateExistingInAnyCase", func(t *testing.T) {
		name := tableName(t.Name(), 0)
		f.createTable(f.account, name)
		for _, again := range []string{name, strings.ToUpper(name), strings.ToLower(name)} {
			if _, err := f.s.CreateTable(f.ctx, f.account, again); !errors.Is(err, store.ErrTableExists) {
				t.Errorf("CreateTable(%q) again = %v; want ErrTableExists", again, err)
			}
		}
		got, err := f.s.GetTable(f.ctx, f.account, name)
		if err != nil || got.Name != name {
			t.Errorf("GetTable after failed re-creates = %+v, %v; want the original name %q", got, err, name)
		}
	})

	t.Run("DeleteInAnyCaseDropsEntities", func(t *testing.T) {
		name := tableName(t.Name(), 0)
		f.createTable(f.account, name)
		e := newEntity("pk", "rk", props{"A": edm.NewInt32(1)})
		f.insert(name, e)
		if err := f.s.DeleteTable(f.ctx, f.account, strings.ToUpper(name)); err != nil {
			t.Fatalf("DeleteTable(upper case): %v", err)
		}
		if _, err := f.s.GetTable(f.ctx, f.account, name); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("GetTable after delete = %v; want ErrTableNotFound", err)
		}
		if err := f.s.DeleteTable(f.ctx, f.account, name); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("DeleteTable twice = %v; want ErrTableNotFound", err)
		}
		// A table created again under the same name starts empty.
		f.createTable(f.account, strings.ToLower(name))
		f.wantAbsent(name, "pk", "rk")
		page, err := f.s.QueryEntities(f.ctx, f.account, name, store.Query{Top: 1000})
		if err != nil || len(page.Entities) != 0 {
			t.Errorf("QueryEntities on re-created table = %d entities, %v; want none", len(page.Entities), err)
		}
		got, err := f.s.GetTable(f.ctx, f.account, name)
		if err != nil || got.Name != strings.ToLower(name) {
			t.Errorf("GetTable(re-created) = %+v, %v; want the new case %q", got, err, strings.ToLower(name))
		}
	})

	t.Run("ACL", func(t *testing.T) {
		name := tableName(t.Name(), 0)
		other := tableName(t.Name(), 1)
		f.createTable(f.account, name)
		f.createTable(f.account, other)
		at := func(s string) time.Time {
			tm, err := time.Parse(time.RFC3339, s)
			if err != nil {
				t.Fatal(err)
			}
			return tm
		}
		full := []model.SignedIdentifier{
			{ID: "read-only", Start: at("2024-01-01T00:00:00Z"), Expiry: at("2025-01-01T00:00:00Z"), Permission: "r"},
			{ID: "no-start", Expiry: at("2030-06-30T12:30:45Z"), Permission: "raud"},
			{ID: "no-times", Permission: "au"},
			{ID: "empty-permission"},
			{ID: "MTIzNDU2Nzg5MDEyMzQ1Njc4OTAxMjM0NTY3ODkwMTI=", Start: at("2023-02-03T04:05:06Z"), Permission: "d"},
		}
		want := slices.Clone(full)
		if err := f.s.SetTableACL(f.ctx, f.account, strings.ToUpper(name), full); err != nil {
			t.Fatalf("SetTableACL: %v", err)
		}
		full[0].Permission = "changed by caller" // the store must hold its own copy
		full = want
		assertACL(t, f, name, full)
		assertACL(t, f, other, nil)

		got, _ := f.s.GetTable(f.ctx, f.account, name)
		if len(got.ACL) > 0 {
			got.ACL[0].ID = "changed by caller"
		}
		assertACL(t, f, name, full)

		if err := f.s.SetTableACL(f.ctx, f.account, name, full[2:3]); err != nil {
			t.Fatalf("SetTableACL(replace): %v", err)
		}
		assertACL(t, f, name, full[2:3])
		if err := f.s.SetTableACL(f.ctx, f.account, name, nil); err != nil {
			t.Fatalf("SetTableACL(nil): %v", err)
		}
		assertACL(t, f, name, nil)
		if err := f.s.SetTableACL(f.ctx, f.account, tableName(t.Name(), 2), full); !errors.Is(err, store.ErrTableNotFound) {
			t.Errorf("SetTableACL on a missing table = %v; want ErrTableNotFound", err)
		}
	})

	t.Run("QueryTables", func(t *testing.T) {
		// A fresh account so only these tables are listed.
		acct := accountName(t.Name(), 1)
		if page, err := f.s.QueryTables(f.ctx, acct, store.TableQuery{Top: 1000}); err != nil || len(page.Tables) != 0 || page.Next != "" {
			t.Fatalf("QueryTables on an empty account = %+v, %v; want nothing", page, err)
		}
		sfx := nameHash(t.Name())[:8]
		// Created out of order and in mixed case; listed by lower-cased name.
		created := []string{"dTable" + sfx, "Btable" + sfx, "eTABLE" + sfx, "aTable" + sfx, "CTable" + sfx}
		for _, name := range created {
			f.createTable(acct, name)
		}
		want := slices.Clone(created)
		slices.SortFunc(want, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) })

		for _, top := range []int{1, 2, 3, 1000} {
			if got := queryAllTables(t, f, acct, store.TableQuery{Top: top}); !slices.Equal(got, want) {
				t.Errorf("Top=%d: listed %v; want %v", top, got, want)
			}
		}
		after := strings.ToLower(want[1])
		if got := queryAllTables(t, f, acct, store.TableQuery{Top: 2, After: after}); !slices.Equal(got, want[2:]) {
			t.Errorf("After=%q: listed %v; want %v", after, got, want[2:])
		}
		match := func(ti store.TableInfo) bool {
			l := strings.ToLower(ti.Name)
			return strings.HasPrefix(l, "c") || strings.HasPrefix(l, "e")
		}
		wantMatched := []string{want[2], want[4]}
		for _, top := range []int{1, 1000} {
			if got := queryAllTables(t, f, acct, store.TableQuery{Top: top, Match: match}); !slices.Equal(got, wantMatched) {
				t.Errorf("Match, Top=%d: listed %v; want %v", top, got, wantMatched)
			}
		}
		none := func(store.TableInfo) bool { return false }
		if got := queryAllTables(t, f, acct, store.TableQuery{Top: 2, Match: none}); len(got) != 0 {
			t.Errorf("Match none: listed %v", got)
		}
		// Deleted tables leave the listing.
		if err := f.s.DeleteTable(f.ctx, acct, want[0]); err != nil {
			t.Fatal(err)
		}
		if got := queryAllTables(t, f, acct, store.TableQuery{Top: 1000}); !slices.Equal(got, want[1:]) {
			t.Errorf("after delete: listed %v; want %v", got, want[1:])
		}
	})
}

// queryAllTables pages through QueryTables and returns the names, checking
// that pages respect Top and paging ends.
func queryAllTables(t *testing.T, f *fixture, account string, q store.TableQuery) []string {
	t.Helper()
	var names []string
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("QueryTables paging did not end after %d pages", pages)
		}
		page, err := f.s.QueryTables(f.ctx, account, q)
		if err != nil {
			t.Fatalf("QueryTables(%+v): %v", q, err)
		}
		if len(page.Tables) > q.Top {
			t.Fatalf("QueryTables(Top=%d) returned %d tables", q.Top, len(page.Tables))
		}
		for _, ti := range page.Tables {
			names = append(names, ti.Name)
		}
		if page.Next == "" {
			return names
		}
		if page.Next <= q.After {
			t.Fatalf("QueryTables Next %q does not advance past After %q", page.Next, q.After)
		}
		q.After = page.Next
	}
}

func assertACL(t *testing.T, f *fixture, table string, want []model.SignedIdentifier) {
	t.Helper()
	info, err := f.s.GetTable(f.ctx, f.account, table)
	if err != nil {
		t.Fatalf("GetTable(%q): %v", table, err)
	}
	if len(info.ACL) != len(want) {
		t.Fatalf("ACL of %q = %+v; want %+v", table, info.ACL, want)
	}
	for i := range want {
		g, w := info.ACL[i], want[i]
		if g.ID != w.ID || g.Permission != w.Permission || !g.Start.Equal(w.Start) || !g.Expiry.Equal(w.Expiry) ||
			g.Start.IsZero() != w.Start.IsZero() || g.Expiry.IsZero() != w.Expiry.IsZero() {
			t.Errorf("ACL[%d] of %q = %+v; want %+v", i, table, g, w)
		}
	}
}

func (s suite) testServiceProperties(t *testing.T) {
	f := s.fixture(t)
	other := accountName(t.Name(), 1)
	doc1 := []byte(`<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties><Cors/></StorageServiceProperties>`)
	doc2 := bytes.Repeat([]byte("<Logging/>"), 1000)

	t.Run("NilWhenUnset", func(t *testing.T) {
		got, err := f.s.GetServiceProperties(f.ctx, f.account)
		if err != nil || got != nil {
			t.Errorf("GetServiceProperties(unset) = %q, %v; want nil, nil", got, err)
		}
	})
	t.Run("SetGetOverwrite", func(t *testing.T) {
		for _, doc := range [][]byte{doc1, doc2, doc1} {
			if err := f.s.SetServiceProperties(f.ctx, f.account, doc); err != nil {
				t.Fatalf("SetServiceProperties: %v", err)
			}
			got, err := f.s.GetServiceProperties(f.ctx, f.account)
			if err != nil || !bytes.Equal(got, doc) {
				t.Fatalf("GetServiceProperties = %d bytes, %v; want the %d bytes set", len(got), err, len(doc))
			}
		}
	})
	t.Run("PerAccount", func(t *testing.T) {
		if got, err := f.s.GetServiceProperties(f.ctx, other); err != nil || got != nil {
			t.Errorf("other account sees %q, %v; want nil", got, err)
		}
		if err := f.s.SetServiceProperties(f.ctx, other, doc2); err != nil {
			t.Fatal(err)
		}
		if got, _ := f.s.GetServiceProperties(f.ctx, f.account); !bytes.Equal(got, doc1) {
			t.Errorf("setting another account changed this one to %q", got)
		}
	})
	t.Run("CopiesInAndOut", func(t *testing.T) {
		doc := bytes.Clone(doc1)
		if err := f.s.SetServiceProperties(f.ctx, f.account, doc); err != nil {
			t.Fatal(err)
		}
		doc[0] = 'X'
		got, _ := f.s.GetServiceProperties(f.ctx, f.account)
		if len(got) > 0 {
			got[0] = 'Y'
		}
		if again, _ := f.s.GetServiceProperties(f.ctx, f.account); !bytes.Equal(again, doc1) {
			t.Errorf("stored document changed through a caller's slice: %q", again)
		}
	})
}

func (s suite) testAccountIsolation(t *testing.T) {
	f := s.fixture(t)
	a, b := f.account, accountName(t.Name(), 1)
	name := tableName(t.Name(), 0)

	f.createTable(a, name)
	if _, err := f.s.GetTable(f.ctx, b, name); !errors.Is(err, store.ErrTableNotFound) {
		t.Fatalf("account b sees account a's table: %v", err)
	}
	f.createTable(b, strings.ToUpper(name))

	ea := newEntity("pk", "rk", props{"Owner": edm.NewString("a")})
	eb := newEntity("pk", "rk", props{"Owner": edm.NewString("b")})
	if err := f.s.Write(f.ctx, a, name, []store.Op{{Kind: store.OpInsert, Entity: ea}}); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Write(f.ctx, b, name, []store.Op{{Kind: store.OpInsert, Entity: eb}}); err != nil {
		t.Fatalf("insert of the same keys in account b: %v", err)
	}
	for _, c := range []struct {
		account string
		want    *model.Entity
	}{{a, ea}, {b, eb}} {
		got, err := f.s.GetEntity(f.ctx, c.account, name, "pk", "rk")
		if err != nil {
			t.Fatal(err)
		}
		if diff := entityDiff(got, c.want); diff != "" {
			t.Errorf("account %s: %s", c.account, diff)
		}
	}
	if err := f.s.SetTableACL(f.ctx, a, name, []model.SignedIdentifier{{ID: "only-a", Permission: "r"}}); err != nil {
		t.Fatal(err)
	}
	if info, _ := f.s.GetTable(f.ctx, b, name); len(info.ACL) != 0 || info.Name != strings.ToUpper(name) {
		t.Errorf("account b's table = %+v; want its own name and no ACL", info)
	}
	pa, _ := f.s.QueryTables(f.ctx, a, store.TableQuery{Top: 1000})
	pb, _ := f.s.QueryTables(f.ctx, b, store.TableQuery{Top: 1000})
	if len(pa.Tables) != 1 || len(pb.Tables) != 1 || pa.Tables[0].Name != name || pb.Tables[0].Name != strings.ToUpper(name) {
		t.Errorf("QueryTables per account = %+v and %+v", pa.Tables, pb.Tables)
	}
	if err := f.s.DeleteTable(f.ctx, a, name); err != nil {
		t.Fatal(err)
	}
	if got, err := f.s.GetEntity(f.ctx, b, name, "pk", "rk"); err != nil || entityDiff(got, eb) != "" {
		t.Errorf("deleting account a's table touched account b's: %v", err)
	}
	if _, err := f.s.GetEntity(f.ctx, a, name, "pk", "rk"); !errors.Is(err, store.ErrTableNotFound) {
		t.Errorf("GetEntity in the deleted table = %v; want ErrTableNotFound", err)
	}
}

func (s suite) testTableNotFound(t *testing.T) {
	f := s.fixture(t)
	existing := f.newTable() // the account exists; only the table is missing
	missing := tableName(t.Name(), 99)
	e := newEntity("pk", "rk", props{"A": edm.NewInt32(1)})
	cases := []struct {
		name string
		call func() error
	}{
		{"GetTable", func() error { _, err := f.s.GetTable(f.ctx, f.account, missing); return err }},
		{"DeleteTable", func() error { return f.s.DeleteTable(f.ctx, f.account, missing) }},
		{"SetTableACL", func() error { return f.s.SetTableACL(f.ctx, f.account, missing, nil) }},
		{"GetEntity", func() error { _, err := f.get(missing, "pk", "rk"); return err }},
		{"QueryEntities", func() error {
			_, err := f.s.QueryEntities(f.ctx, f.account, missing, store.Query{Top: 10})
			return err
		}},
		{"WriteInsert", func() error { return f.write(missing, store.Op{Kind: store.OpInsert, Entity: e}) }},
		{"WriteReplace", func() error { return f.write(missing, store.Op{Kind: store.OpReplace, Entity: e}) }},
		{"WriteMerge", func() error { return f.write(missing, store.Op{Kind: store.OpMerge, Entity: e}) }},
		{"WriteDelete", func() error { return f.write(missing, store.Op{Kind: store.OpDelete, Entity: e}) }},
		{"WriteMultiOp", func() error {
			e2 := newEntity("pk", "rk2", nil)
			return f.write(missing, store.Op{Kind: store.OpInsert, Entity: e}, store.Op{Kind: store.OpInsert, Entity: e2})
		}},
		{"GetEntityUnknownAccount", func() error {
			_, err := f.s.GetEntity(f.ctx, accountName(t.Name(), 7), existing, "pk", "rk")
			return err
		}},
		{"WriteUnknownAccount", func() error {
			return f.s.Write(f.ctx, accountName(t.Name(), 7), existing, []store.Op{{Kind: store.OpInsert, Entity: e}})
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(); !errors.Is(err, store.ErrTableNotFound) {
				t.Errorf("%s on a missing table = %v; want ErrTableNotFound", c.name, err)
			}
		})
	}
}
