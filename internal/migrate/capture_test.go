package migrate

import (
	"strings"
	"testing"
)

func TestSplitValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{name: "empty page", in: `{"odata.metadata":"x","value":[]}`, want: nil},
		{name: "two entities", in: `{"odata.metadata":"x","value":[{"a":1},{"b":"]}\"{"}]}`, want: []string{`{"a":1}`, `{"b":"]}\"{"}`}},
		{name: "value first, spaces", in: " {\n \"value\" : [ {\"a\":[1,{\"x\":true}]} , {} ] , \"z\":null } \n", want: []string{`{"a":[1,{"x":true}]}`, `{}`}},
		{name: "scalars skipped", in: `{"n":-1.5e3,"t":true,"s":"v\"alue","value":[{"k":false}]}`, want: []string{`{"k":false}`}},
		{name: "not an object", in: `[]`, wantErr: "expected an object"},
		{name: "no value", in: `{"odata.metadata":"x"}`, wantErr: `no "value"`},
		{name: "empty object", in: `{}`, wantErr: `no "value"`},
		{name: "value twice", in: `{"value":[],"value":[]}`, wantErr: "twice"},
		{name: "value not an array", in: `{"value":{}}`, wantErr: "not an array"},
		{name: "unterminated string", in: `{"value":[{"a":"b}]}`, wantErr: "unterminated"},
		{name: "missing comma", in: `{"value":[{} {}]}`, wantErr: "expected ','"},
		{name: "trailing data", in: `{"value":[]} x`, wantErr: "after the object"},
		{name: "missing colon", in: `{"value" []}`, wantErr: "expected ':'"},
		{name: "too deep", in: `{"value":[` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `]}`, wantErr: "deeply"},
		{name: "truncated", in: `{"value":[{"a":1}`, wantErr: "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := splitValue([]byte(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d elements %q, want %q", len(got), got, tt.want)
			}
			for i := range got {
				if string(got[i]) != tt.want[i] {
					t.Errorf("element %d = %s, want %s", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestDecodePage(t *testing.T) {
	t.Parallel()
	t.Run("entities", func(t *testing.T) {
		es, err := decodePage([]byte(`{"value":[{"PartitionKey":"a","RowKey":"1","X":1.0},{"PartitionKey":"a","RowKey":"2"}]}`))
		if err != nil || len(es) != 2 || es[1].RowKey != "2" {
			t.Fatalf("decodePage = %v, %v", es, err)
		}
	})
	t.Run("bad entity names its index", func(t *testing.T) {
		_, err := decodePage([]byte(`{"value":[{"PartitionKey":"a","RowKey":"1"},{"RowKey":"2"}]}`))
		if err == nil || !strings.Contains(err.Error(), "entity 1") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad body", func(t *testing.T) {
		if _, err := decodePage([]byte(`nope`)); err == nil {
			t.Fatal("no error")
		}
	})
}

func FuzzSplitValue(f *testing.F) {
	f.Add([]byte(`{"value":[{"a":1},{"b":"]}"}]}`))
	f.Add([]byte(`{"odata.metadata":"x","value":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		parts, err := splitValue(data)
		if err != nil {
			return
		}
		// Every element is a slice of the input that itself scans as one
		// value.
		for _, p := range parts {
			sc := jsonScanner{b: p}
			if err := sc.skipValue(0); err != nil || sc.i != len(p) {
				t.Fatalf("element %q does not scan as one value: %v", p, err)
			}
		}
	})
}
