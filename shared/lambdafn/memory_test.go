package lambdafn

import "testing"

func TestMemoryLimit(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	cases := []struct {
		env  map[string]string
		want int64
	}{
		{map[string]string{envMemorySize: "512"}, 448 << 20},
		{map[string]string{envMemorySize: "128"}, 112 << 20},
		{map[string]string{envMemorySize: "512", "GOMEMLIMIT": "100MiB"}, 0},
		{map[string]string{}, 0},
		{map[string]string{envMemorySize: "lots"}, 0},
	}
	for _, c := range cases {
		if got := memoryLimit(env(c.env)); got != c.want {
			t.Errorf("memoryLimit(%v) = %d, want %d", c.env, got, c.want)
		}
	}
}
