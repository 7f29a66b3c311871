package httpapi

import (
	"strings"
	"testing"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/operation"
)

func TestParseResource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		path string
		want resource
	}{
		{"service root", "/", resource{kind: operation.PathService}},
		{"empty", "", resource{kind: operation.PathService}},
		{"tables", "/Tables", resource{kind: operation.PathTables}},
		{"tables lower case", "/tables", resource{kind: operation.PathTables}},
		{"tables with parens", "/Tables()", resource{kind: operation.PathTables}},
		{"one table", "/Tables('MyTable')", resource{kind: operation.PathTable, table: "MyTable"}},
		{"batch", "/$batch", resource{kind: operation.PathBatch}},
		{"entities bare", "/mytable", resource{kind: operation.PathEntities, table: "mytable"}},
		{"entities parens", "/mytable()", resource{kind: operation.PathEntities, table: "mytable"}},
		{"entity", "/t1(PartitionKey='a',RowKey='b')", resource{kind: operation.PathEntity, table: "t1", partitionKey: "a", rowKey: "b"}},
		{"entity keys reversed", "/t1(RowKey='b',PartitionKey='a')", resource{kind: operation.PathEntity, table: "t1", partitionKey: "a", rowKey: "b"}},
		{"empty keys", "/t1(PartitionKey='',RowKey='')", resource{kind: operation.PathEntity, table: "t1"}},
		{"doubled quotes", "/t1(PartitionKey='it''s',RowKey='''')", resource{kind: operation.PathEntity, table: "t1", partitionKey: "it's", rowKey: "'"}},
		{"keys with parens and commas", "/t1(PartitionKey='a,b)',RowKey='c=(d)')", resource{kind: operation.PathEntity, table: "t1", partitionKey: "a,b)", rowKey: "c=(d)"}},
		{"unicode keys", "/t1(PartitionKey='日本',RowKey='😀')", resource{kind: operation.PathEntity, table: "t1", partitionKey: "日本", rowKey: "😀"}},
		{"spaces around", "/t1(PartitionKey= 'a' ,RowKey='b')", resource{kind: operation.PathEntity, table: "t1", partitionKey: "a", rowKey: "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseResource(tt.path)
			if err != nil {
				t.Fatalf("parseResource(%q): %v", tt.path, err)
			}
			if got != tt.want {
				t.Fatalf("parseResource(%q) = %+v, want %+v", tt.path, got, tt.want)
			}
		})
	}
}

func TestParseResourceErrors(t *testing.T) {
	t.Parallel()
	for _, path := range []string{
		"/t1(PartitionKey='a')",
		"/t1(RowKey='b')",
		"/t1(PartitionKey='a',RowKey='b',)",
		"/t1(PartitionKey='a',PartitionKey='b')",
		"/t1(PartitionKey='a',RowKey='b',RowKey='c')",
		"/t1(PartitionKey='a,RowKey='b')",
		"/t1(PartitionKey=a,RowKey=b)",
		"/t1(Foo='a',RowKey='b')",
		"/t1(PartitionKey='a',RowKey='b'",
		"/t1(PartitionKey='a'RowKey='b')",
		"/a/b",
		"/Tables('x'",
		"/Tables(x)",
	} {
		t.Run(path, func(t *testing.T) {
			_, err := parseResource(path)
			ae, ok := apierr.As(err)
			if !ok || ae.Code != apierr.InvalidURI {
				t.Fatalf("parseResource(%q) error = %v, want InvalidUri", path, err)
			}
		})
	}
}

func FuzzParseResource(f *testing.F) {
	for _, s := range []string{"/Tables", "/t(PartitionKey='a',RowKey='b')", "/t(PartitionKey='''',RowKey='x''y')", "/$batch"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		res, err := parseResource(p)
		if err != nil {
			if _, ok := apierr.As(err); !ok {
				t.Fatalf("non-API error %v", err)
			}
			return
		}
		if res.kind == operation.PathEntity {
			// What the SDKs send for these keys must parse back to them.
			again, err := parseResource("/" + res.table + "(PartitionKey=" + quote(res.partitionKey) + ",RowKey=" + quote(res.rowKey) + ")")
			if err != nil || again != res {
				t.Fatalf("round trip of %+v: %+v, %v", res, again, err)
			}
		}
	})
}

// quote writes s as an OData string literal, byte for byte.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func TestContinuationTokens(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "a", "pk 1", "日本語", "😀+/=%'", "\u00e9\u0301", string([]byte{0xff})} {
		tok := encodeToken(key)
		if tok == "" {
			t.Fatalf("token for %q is empty", key)
		}
		got, err := decodeToken(tok)
		if err != nil || got != key {
			t.Fatalf("decodeToken(encodeToken(%q)) = %q, %v", key, got, err)
		}
	}
	for _, bad := range []string{"x", "1!", "1!3!abcd", "1!x!ab", "2!2!YQ", "1!2!@@"} {
		if _, err := decodeToken(bad); err == nil {
			t.Errorf("decodeToken(%q) accepted", bad)
		}
	}
}
