package migrate

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/tablebridgetest"
)

// TestReadPageSince: a Since request returns the entities written at or
// after it (rounded down to the second), whether the server filters
// (Timestamp ge) or, for Cosmos DB's Table API, which blocks Timestamp
// queries, the client does; a store source keeps the same ones.
func TestReadPageSince(t *testing.T) {
	t.Parallel()
	// Near the real time: the server checks request dates against its
	// clock.
	t0 := time.Now().UTC().Truncate(time.Second)
	var now atomic.Int64
	now.Store(t0.UnixNano())
	srv := protocoltest.New(t, tablebridgetest.WithNow(func() time.Time { return time.Unix(0, now.Load()).UTC() }))
	ctx := context.Background()
	tc := srv.Client().NewClient("Since")
	if _, err := tc.CreateTable(ctx, nil); err != nil {
		t.Fatal(err)
	}
	write := func(rk string, at time.Time) {
		now.Store(at.UnixNano())
		body := []byte(`{"PartitionKey":"p","RowKey":"` + rk + `"}`)
		if _, err := tc.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
			t.Fatal(err)
		}
	}
	write("old", t0)
	write("same-second", t0.Add(10*time.Second+100*time.Millisecond))
	write("new", t0.Add(20*time.Second))

	ep, err := OpenEndpoint(srv.ConnectionString(), EndpointOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cosmos := *ep
	cosmos.url = "https://acct.table.cosmos.azure.com/"
	sio, err := NewStoreIO(srv.Store, "devstoreaccount1", "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	since := t0.Add(10*time.Second + 500*time.Millisecond)
	for name, src := range map[string]Source{"server filter": ep, "client filter (Cosmos DB)": &cosmos, "store": sio} {
		t.Run(name, func(t *testing.T) {
			var got []string
			req := PageRequest{Top: 1, Since: since}
			for {
				page, err := src.ReadPage(ctx, "Since", req)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range page.Entities {
					got = append(got, e.RowKey)
				}
				if page.Next == nil {
					break
				}
				req.After = page.Next
			}
			if len(got) != 2 || got[0] != "new" || got[1] != "same-second" {
				t.Errorf("got %q, want [new same-second]", got)
			}
		})
	}
	if !cosmosTable("https://acct.table.cosmosdb.azure.com") || cosmosTable("https://acct.table.core.windows.net") {
		t.Error("cosmosTable misjudges Azure hosts")
	}
}
