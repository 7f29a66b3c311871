package linearize_test

import (
	"testing"
	"time"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/internal/dynamoproxy"
	"github.com/tablebridge/tablebridge/internal/linearize"
	"github.com/tablebridge/tablebridge/shared/store/dynamostore"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// TestDynamoDBFaults checks histories over DynamoDB Local behind
// internal/dynamoproxy, which injects what AWS delivers and DynamoDB Local
// does not: one fault kind per configuration, each at a rate that hits a
// few of a history's requests. The store's DynamoDB timeout is 1 s, so
// a slow DynamoDB runs past it.
func TestDynamoDBFaults(t *testing.T) {
	t.Parallel()
	endpoint := dynamolocal.Endpoint(t)
	for _, tc := range []struct {
		name  string
		rates dynamoproxy.FaultRates
	}{
		{"throttle", dynamoproxy.FaultRates{Throttle: 0.1}},
		{"lose-answer", dynamoproxy.FaultRates{LoseAnswer: 0.03}},
		{"in-flight", dynamoproxy.FaultRates{InFlight: 0.03}},
		{"conflict", dynamoproxy.FaultRates{Conflict: 0.1}},
		{"slow", dynamoproxy.FaultRates{Slow: 0.03}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			proxy, err := dynamoproxy.Start(dynamoproxy.Config{Upstream: endpoint, Faults: dynamoproxy.RandomFaults(uint64(time.Now().UnixNano()), tc.rates)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { proxy.Close() })
			prefix := dynamolocal.UniqueName("linf") + "-"
			st, err := dynamostore.New(dynamolocal.Context(t, 2*time.Minute), dynamolocal.NewClient(proxy.URL()), dynamostore.Options{
				TablePrefix: prefix, SharedTable: prefix + "entities", RecreateCatalog: true, RequestTimeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			srv := tablebridgetest.NewServer(t, tablebridgetest.WithStore(st))
			linearize.Test(t, linearize.Config{Name: "dynamodb-" + tc.name, Histories: 1}, srv.Client())
			faults := map[dynamoproxy.FaultKind]int{}
			for _, f := range proxy.Faults() {
				faults[f.Kind]++
			}
			t.Logf("faults injected: %v", faults)
		})
	}
}
