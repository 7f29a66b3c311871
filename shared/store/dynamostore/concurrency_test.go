package dynamostore

import (
	"errors"
	"sync"
	"testing"

	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/store"
)

const (
	racers = 16
	rounds = 5
)

// TestConditionalWriteRace: in each round 16 writers race a conditional
// write (If-Match the current ETag) on one entity. Exactly one wins; the
// others get ErrConditionFailed; the stored entity is the winner's.
//
// It stays serial (no t.Parallel): its 16 writers of 480 KB transactions
// load DynamoDB Local enough that a test beside it can push a write past
// the store's own timeout.
func TestConditionalWriteRace(t *testing.T) {
	env := newEnv(t, newTestStore(t))
	cases := []struct {
		name string
		kind store.OpKind
		// large makes the entity span several items, so every write takes
		// the chunked path (a TransactWriteItems pinned to the version).
		large bool
	}{
		{"Replace", store.OpReplace, false},
		{"Merge", store.OpMerge, false},
		{"ReplaceLarge", store.OpReplace, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rk := c.name
			body := props{}
			if c.large {
				body = binaries(8, 60<<10)
			}
			env.insert(newEntity("race", rk, body))
			for round := 1; round <= rounds; round++ {
				cur := env.get("race", rk)
				errs := make([]error, racers)
				sent := make([]map[string]edm.Value, racers)
				var wg sync.WaitGroup
				for w := range racers {
					p := props{"Round": edm.NewInt32(int32(round)), "Writer": edm.NewInt32(int32(w))}
					for k, v := range body {
						p[k] = v
					}
					sent[w] = p
					e := newEntity("race", rk, p)
					wg.Go(func() {
						errs[w] = env.write(store.Op{Kind: c.kind, Entity: e, Cond: store.CondTimestamp, Timestamp: cur.Timestamp})
					})
				}
				wg.Wait()
				winner := -1
				for w, err := range errs {
					switch {
					case err == nil && winner >= 0:
						t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
					case err == nil:
						winner = w
					case !errors.Is(err, store.ErrConditionFailed):
						t.Fatalf("round %d: writer %d: %v; want ErrConditionFailed", round, w, err)
					}
				}
				if winner < 0 {
					t.Fatalf("round %d: no writer won", round)
				}
				got := env.get("race", rk)
				if w := got.Properties["Writer"]; w.Int != int64(winner) || got.Properties["Round"].Int != int64(round) {
					t.Fatalf("round %d: stored Writer %d Round %d; want the winner %d", round, w.Int, got.Properties["Round"].Int, winner)
				}
				if len(got.Properties) != len(sent[winner]) {
					t.Fatalf("round %d: %d properties stored; want %d", round, len(got.Properties), len(sent[winner]))
				}
			}
		})
	}
}
