package loadgen

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestEntityTemplate(t *testing.T) {
	t.Parallel()
	floor := 0
	for _, size := range []int{0, 300, 1000, 64 << 10} {
		t.Run(strconv.Itoa(size)+" bytes", func(t *testing.T) {
			tmpl, err := newEntityTemplate(size, rand.New(rand.NewPCG(9, 10)))
			if err != nil {
				t.Fatal(err)
			}
			pk := appendPartitionKey(nil, kindInsert, 12, 345)
			rk := appendRowKey(nil, 6789)
			entity := tmpl.appendEntity(nil, pk, rk)
			if len(entity) != tmpl.size {
				t.Errorf("rendered %d bytes, template says %d", len(entity), tmpl.size)
			}
			if size == 0 {
				floor = len(entity)
			} else if len(entity) != max(size, floor) {
				t.Errorf("rendered %d bytes, want %d", len(entity), max(size, floor))
			}

			var props map[string]any
			if err := json.Unmarshal(entity, &props); err != nil {
				t.Fatalf("not JSON: %v\n%s", err, entity)
			}
			if props["PartitionKey"] != "i0012-000345" || props["RowKey"] != "0000006789" {
				t.Errorf("keys %v/%v", props["PartitionKey"], props["RowKey"])
			}
			custom := 0
			for name := range props {
				if name != "PartitionKey" && name != "RowKey" && !bytes.Contains([]byte(name), []byte("@odata.type")) {
					custom++
				}
			}
			if custom != 10 {
				t.Errorf("%d custom properties, want 10", custom)
			}
			for name, typ := range map[string]string{"Total": "Edm.Int64", "Created": "Edm.DateTime", "Ref": "Edm.Guid", "Blob": "Edm.Binary"} {
				if props[name+"@odata.type"] != typ {
					t.Errorf("%s annotated %v, want %s", name, props[name+"@odata.type"], typ)
				}
			}
			if price, ok := props["Price"].(float64); !ok || price == float64(int64(price)) {
				t.Errorf("Price %v must be a non-integral double, or it is inferred as Int32", props["Price"])
			}
			// aztables re-marshals entities through a map before sending;
			// the bench must already send those very bytes.
			again, err := json.Marshal(props)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again, entity) {
				t.Errorf("SDK re-marshal differs:\n got %s\nwant %s", again, entity)
			}
		})
	}
}

func TestKeys(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"insert partition", appendPartitionKey(nil, kindInsert, 3, 12), "i0003-000012"},
		{"seed partition has no worker", appendPartitionKey(nil, kindSeed, -1, 7), "q-000007"},
		{"batch partition", appendPartitionKey([]byte("x"), kindBatch, 4095, 999999), "xb4095-999999"},
		{"row key", appendRowKey(nil, 42), "0000000042"},
		{"wide row key is not cut", appendPadded(nil, 123456, 3), "123456"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if string(c.got) != c.want {
				t.Fatalf("got %q, want %q", c.got, c.want)
			}
		})
	}
}
