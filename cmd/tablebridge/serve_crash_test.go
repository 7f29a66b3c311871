package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/internal/serveproc"
	"github.com/tablebridge/tablebridge/shared/store"
)

// TestKill9KeepsAcknowledgedWrites runs the real `tablebridge serve` on each
// embedded engine under 16 Go SDK clients, 12 inserting entities and 4
// submitting entity group transactions of 10, and kills it with SIGKILL
// (kill -9) in the middle: nothing is shut down or closed. Opening the
// data directory again (its engine recovers from its log) finds every
// insert and every transaction that was acknowledged, each transaction
// whole or absent, and the store takes writes.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	t.Parallel()
	for _, engine := range []string{enginePebble, engineBolt} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			srv := serveproc.Start(t, engine)
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			svc := protocoltest.NewServiceClient(t, srv.ConnectionString)
			if _, err := svc.CreateTable(ctx, "crash", nil); err != nil {
				t.Fatal(err)
			}
			client := svc.NewClient("crash")
			var (
				mu       sync.Mutex
				inserted []string // RowKeys of partition "single"
				batches  []string // PartitionKeys of whole transactions
				wg       sync.WaitGroup
			)
			for w := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ctx.Err() == nil; i++ {
						if w < 12 {
							rk := fmt.Sprintf("w%02d-%06d", w, i)
							if _, err := client.AddEntity(ctx, fmt.Appendf(nil, `{"PartitionKey":"single","RowKey":%q,"N":%d}`, rk, i), nil); err != nil {
								return // the server is gone
							}
							mu.Lock()
							inserted = append(inserted, rk)
							mu.Unlock()
							continue
						}
						pk := fmt.Sprintf("batch-w%02d-%06d", w, i)
						actions := make([]aztables.TransactionAction, 10)
						for j := range actions {
							actions[j] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd,
								Entity: fmt.Appendf(nil, `{"PartitionKey":%q,"RowKey":"%02d"}`, pk, j)}
						}
						if _, err := client.SubmitTransaction(ctx, actions, nil); err != nil {
							return
						}
						mu.Lock()
						batches = append(batches, pk)
						mu.Unlock()
					}
				}()
			}
			waitFor(time.Minute, func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(inserted) >= 150 && len(batches) >= 15
			})
			srv.Kill()
			wg.Wait()
			mu.Lock()
			defer mu.Unlock()
			if len(inserted) == 0 || len(batches) == 0 {
				t.Fatalf("%d inserts and %d transactions acknowledged before the kill; the test proves nothing", len(inserted), len(batches))
			}

			st, err := openDataDir(srv.DataDir, engine, "test", true)
			if err != nil {
				t.Fatalf("open after kill -9: %v", err)
			}
			defer st.Close()
			for _, rk := range inserted {
				if _, err := st.GetEntity(ctx, devAccount, "crash", "single", rk); err != nil {
					t.Fatalf("acknowledged insert %s lost: %v", rk, err)
				}
			}
			rows := countPartitions(t, ctx, st.Store, "crash")
			for _, pk := range batches {
				if rows[pk] != 10 {
					t.Fatalf("acknowledged transaction %s: %d of its 10 entities after kill -9", pk, rows[pk])
				}
			}
			for pk, n := range rows {
				if pk != "single" && n != 10 {
					t.Fatalf("transaction %s half applied: %d of its 10 entities", pk, n)
				}
			}
			if _, err := st.CreateTable(ctx, devAccount, "afterCrash"); err != nil {
				t.Fatalf("write after recovery: %v", err)
			}
			t.Logf("%s: %d inserts and %d transactions acknowledged before kill -9, all there", engine, len(inserted), len(batches))
		})
	}
}

// countPartitions counts a table's entities by PartitionKey.
func countPartitions(t *testing.T, ctx context.Context, st store.Store, table string) map[string]int {
	t.Helper()
	rows := map[string]int{}
	q := store.Query{Top: 1000}
	for {
		page, err := st.QueryEntities(ctx, devAccount, table, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Entities {
			rows[e.PartitionKey]++
		}
		if page.Next == nil {
			return rows
		}
		q.After = page.Next
	}
}
