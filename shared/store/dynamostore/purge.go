package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// The purge deletes what Delete Table left behind when the deployment has a
// shared table: a deleted table's items in the shared table, or a per-table
// table's DynamoDB table. Delete Table records the work as a purge item in
// the catalog, in a partition of its own (purgeAccount, which no account
// name can be: '$' is not a letter or digit), keyed by the time of the
// delete, so the purge finds due work with one Query and nothing is lost
// when a purge stops half way: it runs again from the catalog, deleting
// only what is still there. Deleting an item costs one write unit per 1 KB
// of item (and as much again for its copy in the order index), where a
// per-table DynamoDB table's DeleteTable costs nothing.
//
// Work is due PurgeGrace after the delete (see Options.PurgeGrace). A purger
// takes an item with a lease (a conditional UpdateItem), so two purgers (two
// local servers, or a scheduled function that overlaps its previous run)
// do not work on the same table at once; a lease that is not renewed runs
// out and another purger resumes the table.

const (
	purgeAccount = "$purge"
	catLease     = "LeaseUntil" // purge items: RFC 3339 time until which a purger holds it
	catLeaseBy   = "LeaseBy"    // purge items: the holder's random token, so it can renew
	catOf        = "Of"         // purge items: the Azure account

	// purgeLease is how long a purger holds a table. It renews the lease
	// after a page of deletes once a quarter of it has passed, so a table
	// purged in less time costs one lease write, not one per page, and a
	// shard of any size (at PurgeRate 1,000/s, 120,000 items outlive a
	// lease) never runs past it.
	purgeLease = 2 * time.Minute
	// purgeChecks bounds the passes over a table's shards: a pass that
	// finds nothing ends the purge; the order index lags behind deletes,
	// so a pass may find items deleted a moment ago and delete them again.
	purgeChecks = 3
	// batchWriteMax is BatchWriteItem's limit of requests per call.
	batchWriteMax = 25
)

// purgeItem is the catalog item of a deleted table's purge.
func purgeItem(account, name, phys, id, deletedAt string) item {
	key := deletedAt + "/" + account + "/"
	if id != "" {
		key += id
	} else {
		key += phys
	}
	it := catalogKey(purgeAccount, key)
	it[catOf] = str(account)
	it[catName] = str(name)
	it[catPhysical] = str(phys)
	it[catDeletedAt] = str(deletedAt)
	if id != "" {
		it[catID] = str(id)
	}
	return it
}

// PurgeReport says what one Purge call did.
type PurgeReport struct {
	Tables  int // tables purged completely
	Items   int // items deleted (entities and their overflow items)
	Pending int // due purges left for a later call (time ran out, or leased elsewhere)
}

// Purge works off the purges that are due, until none is left or ctx ends
// (a purge stopped by ctx resumes at the next call). It is safe to run in
// several processes at once.
func (s *Store) Purge(ctx context.Context) (PurgeReport, error) {
	var rep PurgeReport
	due, err := s.duePurges(ctx)
	if err != nil {
		return rep, err
	}
	for i, it := range due {
		if ctx.Err() != nil {
			rep.Pending += len(due) - i
			break
		}
		lease := &purgeLeaseHolder{token: newGen()}
		leased, err := s.leasePurge(ctx, it, lease)
		if err != nil {
			return rep, err
		}
		if !leased {
			rep.Pending++
			continue
		}
		done, err := s.purgeTable(ctx, it, lease, &rep)
		if err != nil {
			if ctx.Err() != nil {
				rep.Pending += len(due) - i
				return rep, nil
			}
			return rep, err
		}
		if !done {
			rep.Pending++
			continue
		}
		if err := s.finishPurge(ctx, it); err != nil {
			return rep, err
		}
		rep.Tables++
	}
	return rep, nil
}

// duePurges reads the purge items older than PurgeGrace.
func (s *Store) duePurges(ctx context.Context) ([]item, error) {
	in := &dynamodb.QueryInput{
		TableName:                aws.String(s.opts.CatalogTable),
		ConsistentRead:           aws.Bool(true),
		KeyConditionExpression:   aws.String("#a = :a AND #k < :cut"),
		ExpressionAttributeNames: map[string]string{"#a": catAccount, "#k": catKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":a":   str(purgeAccount),
			":cut": str(formatDeletedAt(time.Now().Add(-s.opts.PurgeGrace))),
		},
	}
	var due []item
	for {
		cctx, cancel := s.call(ctx)
		out, err := s.db.Query(cctx, in)
		cancel()
		if err != nil {
			return nil, s.catalogErr(ctx, "find purges", err)
		}
		due = append(due, out.Items...)
		if out.LastEvaluatedKey == nil {
			return due, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// purgeLeaseHolder is one purger's hold on one purge item.
type purgeLeaseHolder struct {
	token   string    // written as LeaseBy: the holder may renew a lease that has not run out
	renewAt time.Time // when the next renewal is due
}

// leasePurge takes a purge item for purgeLease, or renews the holder's own
// lease; false when another purger holds it.
func (s *Store) leasePurge(ctx context.Context, it item, h *purgeLeaseHolder) (bool, error) {
	now := time.Now().UTC()
	cctx, cancel := s.call(ctx)
	defer cancel()
	_, err := s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.opts.CatalogTable),
		Key:                      catalogKey(purgeAccount, stringAttr(it, catKey)),
		UpdateExpression:         aws.String("SET #l = :until, #b = :me"),
		ConditionExpression:      aws.String("attribute_exists(#k) AND (attribute_not_exists(#l) OR #l < :now OR #b = :me)"),
		ExpressionAttributeNames: map[string]string{"#l": catLease, "#b": catLeaseBy, "#k": catKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":until": str(formatDeletedAt(now.Add(s.leaseFor))),
			":now":   str(formatDeletedAt(now)),
			":me":    str(h.token),
		},
	})
	if _, ok := isConditionFailed(err); ok {
		return false, nil
	}
	if err != nil {
		return false, s.catalogErr(ctx, "lease purge", err)
	}
	h.renewAt = now.Add(s.leaseFor / 4)
	return true, nil
}

// keepLease renews the holder's lease once it is due (a quarter of the
// lease has passed); false when it ran out meanwhile and another purger
// took the table over, which then goes on with it.
func (s *Store) keepLease(ctx context.Context, it item, h *purgeLeaseHolder) (bool, error) {
	if time.Now().Before(h.renewAt) {
		return true, nil
	}
	return s.leasePurge(ctx, it, h)
}

// finishPurge ends a purge: it removes the purge item and, in the same
// transaction, the tombstone the delete left in the catalog and its copies
// (copies.go), unless the name holds something else by now (created again,
// or never a tombstone: a move or a handover hands a table to the purge
// without deleting its name). Listing the account's tables then no longer
// reads the name.
func (s *Store) finishPurge(ctx context.Context, it item) error {
	account, table, deletedAt := stringAttr(it, catOf), stringAttr(it, catName), stringAttr(it, catDeletedAt)
	// The tombstone answers TableBeingDeleted for the recreate delay
	// (which PurgeGrace, one minute by default, outlasts).
	if at, err := time.Parse(deletedAtLayout, deletedAt); err == nil {
		if err := sleep(ctx, time.Until(at.Add(s.recreateDelay()))); err != nil {
			return err
		}
	}
	key := catalogKey(purgeAccount, stringAttr(it, catKey))
	done := types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.opts.CatalogTable), Key: key}}
	actions := append([]types.TransactWriteItem{done, {Delete: &types.Delete{
		TableName:                 aws.String(s.opts.CatalogTable),
		Key:                       tableKey(account, table),
		ConditionExpression:       aws.String("#s = :deleted AND #d = :at"),
		ExpressionAttributeNames:  map[string]string{"#s": catState, "#d": catDeletedAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":deleted": str(stateDeleted), ":at": str(deletedAt)},
	}}}, s.copyDeletes(account, table, deletedAt)...)
	err := s.catalogWrite(ctx, "finish purge", func(cctx context.Context, opt func(*dynamodb.Options)) error {
		_, err := s.db.TransactWriteItems(cctx, &dynamodb.TransactWriteItemsInput{TransactItems: actions}, opt)
		return err
	})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || !cancelledByConditions(tce) {
		return err
	}
	// The name is not this delete's tombstone: remove the purge item only.
	cctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.db.DeleteItem(cctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.opts.CatalogTable), Key: key}); err != nil {
		return s.catalogErr(ctx, "finish purge", err)
	}
	return nil
}

// purgeTable deletes one deleted table's items, or its DynamoDB table.
// done is false when the items kept coming back (a lagging index) or the
// lease was lost; the purge item stays for a later call.
func (s *Store) purgeTable(ctx context.Context, it item, lease *purgeLeaseHolder, rep *PurgeReport) (done bool, err error) {
	phys := stringAttr(it, catPhysical)
	id := stringAttr(it, catID)
	if id == "" {
		// A per-table table: DynamoDB's DeleteTable, which costs nothing.
		if phys == "" || phys == s.opts.CatalogTable || phys == s.opts.SharedTable {
			return false, fmt.Errorf("%w: purge item %q names table %q", errCorrupt, stringAttr(it, catKey), phys)
		}
		return true, s.deletePhysical(ctx, phys)
	}
	loc := &location{table: phys, prefix: sharedPrefix(stringAttr(it, catOf), id)}
	limiter := newRateLimiter(s.opts.PurgeRate)
	for range purgeChecks {
		found := 0
		for shard := range orderShards {
			n, held, err := s.purgeShard(ctx, loc, shard, limiter, it, lease)
			found += n
			rep.Items += n
			if err != nil || !held {
				return false, err
			}
		}
		if found == 0 {
			return true, nil
		}
	}
	return false, nil
}

// purgeShard deletes the items of one shard of a deleted table, page by
// page: each main item and its overflow items (which the index does not
// hold, but whose number the main item's $chunks gives). After each page
// it keeps the purge item's lease; held is false when the lease was lost.
func (s *Store) purgeShard(ctx context.Context, loc *location, shard int, limiter *rateLimiter, it item, lease *purgeLeaseHolder) (deleted int, held bool, err error) {
	in := &dynamodb.QueryInput{
		TableName:                aws.String(loc.table),
		IndexName:                aws.String(orderIndex),
		KeyConditionExpression:   aws.String("#s = :s"),
		ProjectionExpression:     aws.String("#pk, #rk, #ch"),
		ExpressionAttributeNames: map[string]string{"#s": attrShard, "#pk": attrPartitionKey, "#rk": attrRowKey, "#ch": attrChunks},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":s": loc.shardValue(shard),
		},
		Limit: aws.Int32(batchWriteMax * 4),
	}
	for {
		cctx, cancel := s.call(ctx)
		out, err := s.db.Query(cctx, in)
		cancel()
		if err != nil {
			return deleted, true, mapErr("purge: query "+loc.table, err)
		}
		var keys []item
		for _, ix := range out.Items {
			pk, rk := stringAttr(ix, attrPartitionKey), stringAttr(ix, attrRowKey)
			if !strings.HasPrefix(pk, loc.prefix) {
				// The index's hash key names the table, so this cannot
				// happen; never delete another table's item.
				return deleted, true, fmt.Errorf("%w: item (%q, %q) in shard of %s", errCorrupt, pk, rk, loc.prefix)
			}
			keys = append(keys, keyItem(pk, rk))
			for i := 1; i <= max(metaOf(ix).chunks, 0); i++ {
				keys = append(keys, keyItem(pk, chunkRowKey(rk, i)))
			}
		}
		for len(keys) > 0 {
			n := min(len(keys), batchWriteMax)
			if err := limiter.wait(ctx, n); err != nil {
				return deleted, true, err
			}
			if err := s.batchDelete(ctx, loc.table, keys[:n]); err != nil {
				return deleted, true, err
			}
			deleted += n
			keys = keys[n:]
		}
		if held, err := s.keepLease(ctx, it, lease); err != nil || !held {
			return deleted, held, err
		}
		if out.LastEvaluatedKey == nil {
			return deleted, true, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// batchDelete deletes up to 25 items.
func (s *Store) batchDelete(ctx context.Context, table string, keys []item) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	return s.batchWrite(ctx, table, reqs)
}

// batchWrite sends up to 25 puts or deletes with BatchWriteItem, sending
// what DynamoDB leaves unprocessed (it does under throttling) again after a
// backoff. Each request is idempotent, so sending one again is harmless.
func (s *Store) batchWrite(ctx context.Context, table string, reqs []types.WriteRequest) error {
	for attempt := 0; len(reqs) > 0; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return mapErr("purge", err)
			}
		}
		cctx, cancel := s.call(ctx)
		out, err := s.db.BatchWriteItem(cctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: reqs}})
		cancel()
		if err != nil {
			if errors.Is(mapErr("", err), store.ErrBusy) && attempt < maxWriteAttempts {
				continue
			}
			return mapErr("write items of "+table, err)
		}
		reqs = out.UnprocessedItems[table]
	}
	return nil
}

// rateLimiter spaces out work to at most perSecond units a second.
type rateLimiter struct {
	interval time.Duration
	next     time.Time
}

func newRateLimiter(perSecond int) *rateLimiter {
	return &rateLimiter{interval: time.Second / time.Duration(perSecond)}
}

// wait blocks until n more units fit the rate.
func (l *rateLimiter) wait(ctx context.Context, n int) error {
	now := time.Now()
	if l.next.Before(now) {
		l.next = now
	}
	d := l.next.Sub(now)
	l.next = l.next.Add(time.Duration(n) * l.interval)
	if d <= 0 {
		return nil
	}
	return sleep(ctx, d)
}

// startPurger runs Purge every interval until the returned stop is called.
func (s *Store) startPurger(every time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rep, err := s.Purge(ctx)
			if log := s.opts.Logger; log != nil && (err != nil || rep.Tables > 0 || rep.Items > 0) && ctx.Err() == nil {
				log.Info("purge", "tables", rep.Tables, "items", rep.Items, "pending", rep.Pending, "err", err)
			}
		}
	}()
	return func() { cancel(); <-done }
}
