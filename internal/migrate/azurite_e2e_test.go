package migrate_test

import (
	"fmt"
	"math"
	"sync/atomic"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"

	"github.com/tablebridge/tablebridge/internal/azurite"
	"github.com/tablebridge/tablebridge/internal/migrate"
	"github.com/tablebridge/tablebridge/internal/protocoltest"
	"github.com/tablebridge/tablebridge/shared/edm"
	"github.com/tablebridge/tablebridge/shared/model"
)

// seedEndpoint writes entities into an Azure Table endpoint one by one with
// the SDK, annotated so no type is lost on the way in: UpsertEntity (which
// escapes quotes in keys properly) or, for the empty PartitionKey the SDK
// cannot address, AddEntity.
func seedEndpoint(t *testing.T, cs, table string, entities []*model.Entity) {
	t.Helper()
	ctx := ctxFor(t)
	svc, err := aztables.NewServiceClientFromConnectionString(cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	tc := svc.NewClient(table)
	if _, err := tc.CreateTable(ctx, nil); err != nil {
		t.Fatalf("create %s: %v", table, err)
	}
	for _, e := range entities {
		body := migrate.AppendEntityJSON(nil, e, false)
		if e.PartitionKey == "" {
			_, err = tc.AddEntity(ctx, body, nil)
		} else {
			_, err = tc.UpsertEntity(ctx, body, &aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeReplace})
		}
		if err != nil {
			t.Fatalf("seed %s (%q, %q): %v", table, e.PartitionKey, e.RowKey, err)
		}
	}
}

// azuriteStores are the values Azurite 3.37 cannot keep, found by this
// test: it stores entities as JavaScript objects, and JavaScript has no
// negative zero in JSON (JSON.stringify(-0) is "0"). That loss happens when
// the entity is written into Azurite, before any migration; the migration
// copies what Azurite holds, and verify proves that.
func azuriteStores(e *model.Entity) *model.Entity {
	c := e.Clone()
	for n, v := range c.Properties {
		if v.Type == edm.Double && v.Float == 0 && math.Signbit(v.Float) {
			c.Properties[n] = edm.NewDouble(0)
		}
	}
	return c
}

// azuriteSized shrinks the near-1 MiB entities: Azurite 3.37 measures an
// entity by its JSON (base64 and all) against 1 MB, where Azure counts the
// binary bytes, so it refuses what Azure takes. These still carry 640 KiB.
func azuriteSized(es []*model.Entity) []*model.Entity {
	out := make([]*model.Entity, 0, len(es))
	for _, e := range es {
		if e.PartitionKey == "big" {
			e = e.Clone()
			for n := range e.Properties {
				if n == "Tail" || n >= "Blob10" {
					delete(e.Properties, n)
				}
			}
		}
		out = append(out, e)
	}
	return out
}

var tableCounter atomic.Int64

func TestMigrateFromAzurite(t *testing.T) {
	t.Parallel()
	cs := azurite.ConnectionString(t)
	// Azurite is shared by the test binary: unique table names.
	suffix := fmt.Sprint(tableCounter.Add(1))
	edges, orders := "Edges"+suffix, "Orders"+suffix
	edgeData := azuriteSized(edgeEntities(t))
	orderData := bulkEntities(1500, 15)
	seedEndpoint(t, cs, edges, edgeData)
	azuriteEP := openEndpoint(t, cs)
	{
		// The bulk table goes in through the migration's own writer.
		ctx := ctxFor(t)
		if err := azuriteEP.EnsureTable(ctx, orders); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(orderData); i += 100 {
			if err := azuriteEP.Upsert(ctx, orders, orderData[i:i+100]); err != nil {
				t.Fatal(err)
			}
		}
	}
	var wantEdges []*model.Entity
	for _, e := range edgeData {
		wantEdges = append(wantEdges, azuriteStores(e))
	}

	t.Run("to a tablebridge endpoint", func(t *testing.T) {
		dst := protocoltest.New(t)
		_, err := migrate.Migrate(ctxFor(t), migrate.Options{
			Source:   azuriteEP,
			Dest:     openEndpoint(t, dst.ConnectionString()),
			Tables:   []string{edges, orders},
			PageSize: 200,
			Backoff:  fastBackoff,
		})
		if err != nil {
			t.Fatal(err)
		}
		assertSameEntities(t, edges, wantEdges, readAll(t, dst.Store, edges))
		assertSameEntities(t, orders, orderData, readAll(t, dst.Store, orders))
		verifyClean(t, migrate.VerifyOptions{Source: azuriteEP, Dest: openEndpoint(t, dst.ConnectionString()), Tables: []string{edges, orders}})
	})
	t.Run("to a bolt store", func(t *testing.T) {
		dest := openBolt(t)
		_, err := migrate.Migrate(ctxFor(t), migrate.Options{Source: azuriteEP, Dest: storeIO(t, dest), Tables: []string{edges, orders}, Backoff: fastBackoff})
		if err != nil {
			t.Fatal(err)
		}
		assertSameEntities(t, edges, wantEdges, readAll(t, dest, edges))
		verifyClean(t, migrate.VerifyOptions{Source: azuriteEP, Dest: storeIO(t, dest), Tables: []string{edges, orders}})
	})
}
