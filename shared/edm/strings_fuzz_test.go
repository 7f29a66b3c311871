package edm

import (
	"encoding/json"
	"testing"
)

// FuzzDecodeObjectStrings holds the names and Edm.String values the
// decoder hands out (substrings of one arena, see collectStrings) to what
// encoding/json reads from the same object.
func FuzzDecodeObjectStrings(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"r","a":"x","b":1}`,
		`{"a\u0041":"\ud83d\ude00\n","s@odata.type":"Edm.String","s":"t\"u"}`,
		`{"g@odata.type":"Edm.Guid","g":"C9DA6455213D42C99A793E9149A57833","h":"é"}`,
		`{"odata.etag":"x","x@a.b":"y","z":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := map[string]Value{}
		if err := DecodeObject(data, func(name string, v Value, null bool) error {
			if !null {
				got[name] = v
			}
			return nil
		}); err != nil {
			return
		}
		var want map[string]any
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("DecodeObject accepted %q, encoding/json: %v", data, err)
		}
		for name, v := range got {
			raw, ok := want[name]
			if !ok {
				t.Fatalf("name %q not in %q", name, data)
			}
			s, isString := raw.(string)
			switch v.Type {
			case String:
				if !isString || s != v.Str {
					t.Fatalf("%q: value %q, encoding/json %q", name, v.Str, raw)
				}
			case Guid:
				if canonical, ok := ParseGuid(s); !ok || canonical != v.Str {
					t.Fatalf("%q: Guid %q from %q", name, v.Str, raw)
				}
			}
		}
	})
}
