package storetest

import (
	"regexp"
	"strings"
	"testing"
)

func TestGeneratedNamesAreLegal(t *testing.T) {
	t.Parallel()
	tableRE := regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]{2,62}$`)
	accountRE := regexp.MustCompile(`^[a-z0-9]{3,24}$`)
	testNames := []string{
		"",
		"TestConformance/Tables/ACL",
		"TestConformance/Keys/\"😀\"/\"\"",
		strings.Repeat("VeryLongSubtestName/", 20),
		"123/456#x y",
	}
	seen := map[string]string{}
	for _, tn := range testNames {
		for n := range 3 {
			table, account := tableName(tn, n), accountName(tn, n)
			if !tableRE.MatchString(table) {
				t.Errorf("tableName(%q, %d) = %q is not a legal table name", tn, n, table)
			}
			if !accountRE.MatchString(account) {
				t.Errorf("accountName(%q, %d) = %q is not a legal account name", tn, n, account)
			}
			if prev, dup := seen[strings.ToLower(table)]; dup {
				t.Errorf("tableName(%q, %d) = %q collides with %s", tn, n, table, prev)
			}
			seen[strings.ToLower(table)] = tn
		}
	}
}

func TestPatternDiffersBySeed(t *testing.T) {
	t.Parallel()
	a, b := pattern(64, 1), pattern(64, 2)
	if string(a) == string(b) || string(a) != string(pattern(64, 1)) {
		t.Error("pattern must be deterministic per seed and differ across seeds")
	}
}
