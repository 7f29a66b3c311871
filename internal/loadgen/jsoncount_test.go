package loadgen

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func TestCountValueRows(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		body    string
		want    int
		wantErr bool
	}{
		{"empty page", `{"odata.metadata":"x","value":[]}`, 0, false},
		{"two rows", `{"value":[{"a":1},{"b":{"c":[{}]}}]}`, 2, false},
		{"braces and quotes in strings", `{"value":[{"s":"}{[\"]"},{"t":"\\"}]}`, 2, false},
		{"value key nested is not the list", `{"x":{"value":[{},{}]},"value":[{}]}`, 1, false},
		{"value as a string value is not a key", `{"k":"value","value":[{},{},{}]}`, 3, false},
		{"whitespace", "{ \"value\" : [ { } ,\n { } ] }", 2, false},
		{"no value array", `{"odata.error":{"code":"X"}}`, 0, true},
		{"truncated", `{"value":[{"a":1},{"b"`, 0, true},
		{"unbalanced", `{"value":[]}}`, 0, true},
		{"empty body", ``, 0, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := countValueRows([]byte(c.body))
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %v", err, c.wantErr)
			}
			if got != c.want {
				t.Fatalf("got %d rows, want %d", got, c.want)
			}
		})
	}
}

func TestCountValueRowsOnAPage(t *testing.T) {
	t.Parallel()
	var rows []string
	for i := range 1000 {
		rows = append(rows, fmt.Sprintf(`{"odata.etag":"W/\"datetime'2024-01-01T00%%3A00%%3A00.0000001Z'\"","PartitionKey":"q-000001","RowKey":"%010d","Payload":"a}b{c[d]e\"f"}`, i))
	}
	body := `{"odata.metadata":"http://127.0.0.1/devstoreaccount1/$metadata#t","value":[` + strings.Join(rows, ",") + `]}`
	got, err := countValueRows([]byte(body))
	if err != nil || got != 1000 {
		t.Fatalf("got %d, %v; want 1000 rows", got, err)
	}
}

// FuzzCountValueRows checks the scanner against encoding/json on every input
// that is a valid object with a top-level value array of objects.
func FuzzCountValueRows(f *testing.F) {
	f.Add([]byte(`{"value":[{"a":"}"},{}]}`))
	f.Add([]byte(`{"x":{"value":[{}]},"value":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := countValueRows(body)
		var page struct {
			Value *[]map[string]any `json:"value"`
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(body, &top) != nil || len(top) == 0 {
			return
		}
		if _, ok := top["value"]; !ok {
			return
		}
		if json.Unmarshal(body, &page) != nil || page.Value == nil {
			return
		}
		// encoding/json matches keys case-insensitively; the scanner does not.
		for k := range top {
			if k != "value" && strings.EqualFold(k, "value") {
				return
			}
		}
		if err != nil || got != len(*page.Value) {
			t.Fatalf("countValueRows = %d, %v; encoding/json sees %d rows in %q", got, err, len(*page.Value), body)
		}
	})
}
