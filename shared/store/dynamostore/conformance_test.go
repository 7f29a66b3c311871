package dynamostore

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/storetest"
)

// TestConformance runs the shared suite: every Azure table of the store in
// the shared table, whose order index answers every query in key order as
// the bolt store does.
func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return newTestStore(t)
	})
}

// TestConformancePlacements runs the suite on placements, the tables of
// earlier releases in DynamoDB tables of their own, with the order index.
func TestConformancePlacements(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return placements{Store: newTestStore(t), client: dynamolocal.Client(t), orderIndex: true}
	})
}

// TestConformancePlacementsUnordered runs the suite on placements without
// the order index, whose queries across partitions Scan.
func TestConformancePlacementsUnordered(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store {
		return placements{Store: newTestStore(t), client: dynamolocal.Client(t)}
	}, storetest.PartitionsUnordered())
}

// placements is the store with each table Create Table makes turned at
// once into a placement, as an earlier release created it
// (dynamolocal.CreatePerTable: its own DynamoDB table, its catalog entry
// with no id and no copies), so that the suite's entity operations, and
// Delete Table through the purge, run on placements. Whether a name may be
// created (it exists, it was deleted a moment ago) stays the store's rule.
type placements struct {
	*Store
	client     *dynamodb.Client
	orderIndex bool
}

func (p placements) CreateTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	info, err := p.Store.CreateTable(ctx, account, table)
	if err != nil {
		return info, err
	}
	// A placement of the name deleted before is still there: the suite
	// runs no purge.
	name := dynamolocal.PerTableName(p.opts.TablePrefix, account, table)
	if err := p.deletePhysical(ctx, name); err != nil {
		return info, err
	}
	if _, err := dynamolocal.CreatePerTable(ctx, p.client, dynamolocal.PerTable{Prefix: p.opts.TablePrefix,
		Account: account, Table: table, OrderIndex: p.orderIndex}); err != nil {
		return info, err
	}
	var dels []types.WriteRequest
	for n := range catalogCopies {
		dels = append(dels, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: copyKey(account, table, n)}})
	}
	if _, err := p.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{p.opts.CatalogTable: dels}}); err != nil {
		return info, err
	}
	p.cache.drop(account, table)
	return info, nil
}
