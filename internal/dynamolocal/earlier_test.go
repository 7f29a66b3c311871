package dynamolocal

import "testing"

// TestPerTableName pins the names the releases before the shared table
// gave their DynamoDB tables: the catalog entries of those tables name
// them, and CreatePerTable must make the same.
func TestPerTableName(t *testing.T) {
	for _, c := range []struct{ account, table, want string }{
		{"devstoreaccount1", "MyTable", "tb-devstoreaccount1.mytable"},
		{"acct", "UPPER", "tb-acct.upper"},
		{"a.b", "c", "tb-a_2eb.c"},               // a '.' in an account cannot fake the separator
		{"a", "b.c", "tb-a.b_2ec"},               // nor in a table
		{"a_b", "t", "tb-a_5fb.t"},               // '_' is escaped, so escapes are unambiguous
		{"Acct", "t", "tb-Acct.t"},               // accounts match exactly: case kept
		{"é", "t", "tb-_c3_a9.t"},                // non-ASCII bytes escaped
		{"acct", "Ünï", "tb-acct._c3_bcn_c3_af"}, // lower-cased first
	} {
		if got := PerTableName("tb-", c.account, c.table); got != c.want {
			t.Errorf("PerTableName(%q, %q) = %q; want %q", c.account, c.table, got, c.want)
		}
	}
}
