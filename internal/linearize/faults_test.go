package linearize_test

import (
	"errors"
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/dynamoproxy"
	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// TestDynamoDBFaults checks histories over DynamoDB Local behind
// internal/dynamoproxy, which injects what AWS delivers and DynamoDB Local
// does not: one fault kind per configuration, each at a rate that hits a
// few of a history's requests, and all of them at once over large
// entities. The store's DynamoDB timeout is 1 s, so a slow DynamoDB runs
// past it.
func TestDynamoDBFaults(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	for _, tc := range []struct {
		name  string
		rates dynamoproxy.FaultRates
		cfg   linearize.Config
	}{
		{"throttle", dynamoproxy.FaultRates{Throttle: 0.1}, linearize.Config{}},
		{"lose-answer", dynamoproxy.FaultRates{LoseAnswer: 0.03}, linearize.Config{}},
		{"in-flight", dynamoproxy.FaultRates{InFlight: 0.03}, linearize.Config{}},
		{"conflict", dynamoproxy.FaultRates{Conflict: 0.1}, linearize.Config{}},
		{"slow", dynamoproxy.FaultRates{Slow: 0.03}, linearize.Config{}},
		// In three partitions: every fault at once leaves many writes
		// indeterminate, and the checker's search grows exponentially
		// with those of one partition; split three ways it stays well
		// within its bound on a loaded machine. The other configurations
		// cover histories of one partition.
		{"mixed-large", dynamoproxy.FaultRates{Throttle: 0.02, LoseAnswer: 0.02, InFlight: 0.02, Conflict: 0.02, Slow: 0.02},
			linearize.Config{Large: 0.15, Ops: 12, Partitions: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			faultSeed := uint64(time.Now().UnixNano())
			proxy, err := dynamoproxy.Start(dynamoproxy.Config{Upstream: endpoint, Faults: dynamoproxy.RandomFaults(faultSeed, tc.rates)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { proxy.Close() })
			// The catalog and the shared table are made first, straight
			// on DynamoDB Local and without the short deadline, which a
			// busy DynamoDB Local's first CreateTable can outlast.
			opts := sharedLayout(t)
			newDynamoStore(t, opts)
			opts.RequestTimeout, opts.Endpoint = time.Second, proxy.URL()
			st, err := dynamostore.New(dynamolocal.Context(t, 2*time.Minute), dynamolocal.NewClient(proxy.URL()), opts)
			for attempt := 1; attempt < 5 && errors.Is(err, store.ErrUnavailable); attempt++ {
				st, err = dynamostore.New(dynamolocal.Context(t, 2*time.Minute), dynamolocal.NewClient(proxy.URL()), opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			srv := tablebridgetest.NewServer(t, tablebridgetest.WithStore(st))
			cfg := tc.cfg
			cfg.Name, cfg.Histories = "dynamodb-"+tc.name, 1
			linearize.Test(t, cfg, srv.Client())
			faults := map[dynamoproxy.FaultKind]int{}
			for _, f := range proxy.Faults() {
				faults[f.Kind]++
			}
			// The fault seed gives the same choices, not the same requests
			// (which request gets which depends on arrival order).
			t.Logf("faults injected: %v (fault seed %d)", faults, faultSeed)
			if len(faults) == 0 {
				t.Error("no fault was injected: the history tested none")
			}
		})
	}
}
