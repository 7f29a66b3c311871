package operation

import (
	"strings"
	"testing"
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
		if len(i.Routes) == 0 {
			t.Errorf("%s: no routes", op)
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
