package dynamostore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// GetEntity reads one entity: one strongly consistent GetItem, plus one
// TransactGetItems when the entity is larger than one item.
func (s *Store) GetEntity(ctx context.Context, account, table, partitionKey, rowKey string) (e *model.Entity, err error) {
	err = s.onTable(ctx, account, table, false, func(loc location) error {
		e, err = s.getEntity(ctx, loc, partitionKey, rowKey)
		return err
	})
	return e, err
}

func (s *Store) getEntity(ctx context.Context, loc location, partitionKey, rowKey string) (*model.Entity, error) {
	if err := checkKey(partitionKey, loc.maxPKBytes()); err != nil {
		return nil, err
	}
	if err := checkKey(rowKey, maxRangeKeyBytes); err != nil {
		return nil, err
	}
	main, chunks, err := s.readItems(ctx, &loc, loc.pk(partitionKey), encodeKey(rowKey))
	if err != nil {
		return nil, err
	}
	if main == nil {
		return nil, fmt.Errorf("dynamostore: entity (%q, %q): %w", partitionKey, rowKey, store.ErrEntityNotFound)
	}
	return decodeItems(&loc, main, chunks)
}

// readItems reads an entity's items consistently; main is nil when the
// entity does not exist.
func (s *Store) readItems(ctx context.Context, loc *location, pk, rk string) (item, []item, error) {
	cctx, cancel := s.call(ctx)
	out, err := s.db.GetItem(cctx, &dynamodb.GetItemInput{
		TableName:      aws.String(loc.table),
		Key:            keyItem(pk, rk),
		ConsistentRead: aws.Bool(true),
	})
	cancel()
	if err != nil {
		return nil, nil, mapErr("get entity", err)
	}
	if out.Item == nil {
		return nil, nil, nil
	}
	if metaOf(out.Item).chunks < 0 {
		return out.Item, nil, nil
	}
	return s.readChunked(ctx, loc, pk, rk, metaOf(out.Item).chunks)
}

// maxTornReads bounds how often a read of a chunked entity retries when a
// concurrent write changed its number of overflow items in between.
const maxTornReads = 5

// readChunked reads a chunked entity's main and n overflow items in one
// TransactGetItems, which is serializable with the TransactWriteItems that
// write them, so all items belong to one version.
func (s *Store) readChunked(ctx context.Context, loc *location, pk, rk string, n int) (item, []item, error) {
	for range maxTornReads {
		gets := make([]types.TransactGetItem, 0, n+1)
		gets = append(gets, types.TransactGetItem{Get: &types.Get{TableName: aws.String(loc.table), Key: keyItem(pk, rk)}})
		for i := 1; i <= n; i++ {
			gets = append(gets, types.TransactGetItem{Get: &types.Get{TableName: aws.String(loc.table), Key: keyItem(pk, chunkRowKey(rk, i))}})
		}
		cctx, cancel := s.call(ctx)
		out, err := s.db.TransactGetItems(cctx, &dynamodb.TransactGetItemsInput{TransactItems: gets})
		cancel()
		if err != nil {
			var tce *types.TransactionCanceledException
			if errors.As(err, &tce) {
				continue // conflicted with a write in progress: read again
			}
			return nil, nil, mapErr("get entity", err)
		}
		if len(out.Responses) != len(gets) {
			return nil, nil, fmt.Errorf("dynamostore: TransactGetItems returned %d of %d items", len(out.Responses), len(gets))
		}
		main := out.Responses[0].Item
		if main == nil {
			return nil, nil, nil
		}
		meta := metaOf(main)
		if meta.chunks < 0 {
			return main, nil, nil
		}
		if meta.chunks != n {
			n = meta.chunks
			continue
		}
		chunks := make([]item, n)
		for i := range n {
			chunks[i] = out.Responses[i+1].Item
			if chunks[i] == nil || stringAttr(chunks[i], attrGen) != meta.gen {
				return nil, nil, fmt.Errorf("%w: overflow item %d of (%q, %q) is missing or of another version", errCorrupt, i+1, pk, rk)
			}
		}
		return main, chunks, nil
	}
	return nil, nil, fmt.Errorf("dynamostore: entity (%q, %q) kept changing while read: %w", loc.unpk(pk), decodeKey(rk), store.ErrBusy)
}
