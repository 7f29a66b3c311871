package dynamostore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// IndexReport says what AddOrderIndex did to one table.
type IndexReport struct {
	Table      string // the DynamoDB table
	Scanned    int    // items read by the backfill
	Backfilled int    // entities given the index attributes
	Created    bool   // the index was added (false: it existed)
}

// backfillWorkers bounds the concurrent UpdateItems of a backfill.
const backfillWorkers = 8

// AddOrderIndex gives a table created without the order index (by the
// unordered layout, or before the index existed) the ordered layout. It
// first writes the index attributes on every entity that lacks them, then
// adds the index, and waits until DynamoDB has built it; queries use it from
// then on (other running stores within noIndexRecheck). Entities written
// meanwhile by this code carry the attributes already, so run it after
// every writer runs this version. Running it again is harmless: it repairs
// entities that lack the attributes and leaves an existing index alone.
func (s *Store) AddOrderIndex(ctx context.Context, account, table string) (IndexReport, error) {
	if _, err := s.GetTable(ctx, account, table); err != nil {
		return IndexReport{}, err
	}
	loc, err := s.locate(ctx, account, table)
	if err != nil {
		return IndexReport{}, err
	}
	phys := loc.table
	rep := IndexReport{Table: phys}
	if loc.shared() {
		return rep, nil // the shared table's index holds every entity it has
	}
	if err := s.backfillOrder(ctx, phys, &rep); err != nil {
		return rep, err
	}
	desc, err := s.describe(ctx, phys)
	if err != nil {
		return rep, err
	}
	if orderIndexStatus(desc) == "" {
		create := &types.CreateGlobalSecondaryIndexAction{
			IndexName:  aws.String(orderIndex),
			KeySchema:  orderIndexDefinition().KeySchema,
			Projection: orderIndexDefinition().Projection,
		}
		if pt := desc.ProvisionedThroughput; pt != nil && aws.ToInt64(pt.ReadCapacityUnits) > 0 &&
			(desc.BillingModeSummary == nil || desc.BillingModeSummary.BillingMode != types.BillingModePayPerRequest) {
			// A provisioned table needs capacity for the index too: the
			// table's, since every entity write writes the index.
			create.ProvisionedThroughput = &types.ProvisionedThroughput{ReadCapacityUnits: pt.ReadCapacityUnits, WriteCapacityUnits: pt.WriteCapacityUnits}
		}
		cctx, cancel := s.call(ctx)
		_, err := s.db.UpdateTable(cctx, &dynamodb.UpdateTableInput{
			TableName:                   aws.String(phys),
			AttributeDefinitions:        orderAttributeDefinitions(false),
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: create}},
		})
		cancel()
		if err != nil {
			return rep, mapErr("add order index to "+phys, err)
		}
		rep.Created = true
	}
	if err := s.waitIndexActive(ctx, phys); err != nil {
		return rep, err
	}
	s.noIndex.Delete(phys)
	return rep, nil
}

// orderIndexStatus is the order index's status, "" when the table has none.
func orderIndexStatus(desc *types.TableDescription) types.IndexStatus {
	for _, gsi := range desc.GlobalSecondaryIndexes {
		if aws.ToString(gsi.IndexName) == orderIndex {
			return gsi.IndexStatus
		}
	}
	return ""
}

// waitIndexActive polls until DynamoDB has built the index, which takes
// minutes per gigabyte on a large table, for as long as ctx allows.
func (s *Store) waitIndexActive(ctx context.Context, phys string) error {
	delay := 200 * time.Millisecond
	for {
		desc, err := s.describe(ctx, phys)
		if err != nil {
			return err
		}
		if orderIndexStatus(desc) == types.IndexStatusActive {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dynamostore: order index of %s not ACTIVE yet (it stays usable once built; run again to wait): %w", phys, store.ErrUnavailable)
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}

// backfillOrder writes the index attributes on every main item that lacks
// them, each conditioned on the item still existing, so a concurrent delete
// is not undone.
func (s *Store) backfillOrder(ctx context.Context, phys string, rep *IndexReport) error {
	work := make(chan item)
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	for range backfillWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for key := range work {
				err := s.addOrderAttrs(ctx, phys, key)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				} else if err == nil {
					rep.Backfilled++
				}
				mu.Unlock()
			}
		}()
	}
	var start item
	var scanErr error
	for {
		cctx, cancel := s.call(ctx)
		out, err := s.db.Scan(cctx, &dynamodb.ScanInput{
			TableName:                aws.String(phys),
			ConsistentRead:           aws.Bool(true),
			ProjectionExpression:     aws.String("#pk, #rk, #o"),
			ExpressionAttributeNames: map[string]string{"#pk": attrPartitionKey, "#rk": attrRowKey, "#o": attrOrder},
			ExclusiveStartKey:        start,
		})
		cancel()
		if err != nil {
			scanErr = mapErr("scan "+phys, err)
			break
		}
		rep.Scanned += len(out.Items)
		for _, it := range out.Items {
			if _, ok := it[attrOrder]; ok {
				continue
			}
			if _, chunk := splitRowKey(stringAttr(it, attrRowKey)); chunk > 0 {
				continue // overflow items stay out of the index
			}
			work <- keyItem(stringAttr(it, attrPartitionKey), stringAttr(it, attrRowKey))
		}
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if out.LastEvaluatedKey == nil || failed {
			break
		}
		start = out.LastEvaluatedKey
	}
	close(work)
	wg.Wait()
	if scanErr != nil {
		return scanErr
	}
	return firstErr
}

func (s *Store) addOrderAttrs(ctx context.Context, phys string, key item) error {
	shard, order := orderAttrs(&location{table: phys}, stringAttr(key, attrPartitionKey), stringAttr(key, attrRowKey))
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(phys),
		Key:                       key,
		UpdateExpression:          aws.String("SET #s = :s, #o = :o"),
		ConditionExpression:       aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:  map[string]string{"#s": attrShard, "#o": attrOrder, "#pk": attrPartitionKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": shard, ":o": order},
	})
	if _, ok := isConditionFailed(err); ok {
		return nil // deleted meanwhile
	}
	return mapErr("backfill "+phys, err)
}
