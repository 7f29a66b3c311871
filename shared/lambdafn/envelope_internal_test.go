package lambdafn

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestEnvelopeCostIsMarshalsLength: envelopeCost counts exactly what
// encoding/json writes for a string, for every byte value and for random
// mixes of the characters it escapes, so the answer budget measures the
// real Lambda response.
func TestEnvelopeCostIsMarshalsLength(t *testing.T) {
	check := func(b []byte) {
		t.Helper()
		out, err := json.Marshal(string(b))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := envelopeCost(b), len(out)-2; got != want {
			t.Fatalf("envelopeCost(%q) = %d, json.Marshal writes %d", b, got, want)
		}
	}
	for c := range 256 {
		check([]byte{byte(c)})
	}
	pieces := []string{`"`, `\`, "\n", "\x01", "\b", "<", ">", "&", "\u2028", "\u2029", "é", "𝄞", "\xff", "\xe2\x80", "a", `{"odata.etag":"W/\"x\""}`}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var b []byte
		for range rng.IntN(20) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		check(b)
	}
}
