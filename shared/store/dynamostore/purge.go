package dynamostore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// The purge deletes what Delete Table left behind: a deleted table's items
// in the shared table, or a placement's DynamoDB table (location.go). Delete Table records the work as a purge item in
// the catalog, in a partition of its own (purgeAccount, which no account
// name can be: '$' is not a letter or digit), keyed by the time of the
// delete, so the purge finds due work with one Query and nothing is lost
// when a purge stops half way: it runs again from the catalog, deleting
// only what is still there. Deleting an item costs one write unit per 1 KB
// of item (and as much again for its copy in the order index), where a
// placement's DeleteTable costs nothing.
//
// Work is due PurgeGrace after the delete (see Options.PurgeGrace). A purge
// works on purgeTablesAtOnce tables at a time, and on each table's
// orderShards shards of the order index at once, under one rate for the
// purger (Options.PurgeRate: items a second) and Options.PurgeKeyRate on
// any one partition key, an entity's PartitionKey as well as an index shard's, so
// it never pushes more than a partition's write capacity onto one key.
//
// A purger takes a table with a lease (a conditional UpdateItem), so two
// purgers (two local servers, or a scheduled function that overlaps its
// previous run) do not work on the same table at once. A heartbeat renews
// the lease every third of it while the table is worked on; a purge that
// stops (its context ends: the function's deadline nears) gives the lease
// back at once, and one that dies keeps it for purgeLease at most: either
// way another purger takes the table over within seconds.

const (
	purgeAccount = "$purge"
	catLease     = "LeaseUntil" // purge items: RFC 3339 time until which a purger holds it
	catLeaseBy   = "LeaseBy"    // purge items: the holder's random token, so it can renew
	catOf        = "Of"         // purge items: the Azure account

	// purgeLease is how long a lease holds a table without a renewal.
	purgeLease = 15 * time.Second
	// purgeTablesAtOnce bounds the tables a purge works on at once.
	purgeTablesAtOnce = 4
	// purgeDeleters is how many batches of deletes a table's purge sends
	// at once: at 25 items a batch and tens of milliseconds an answer,
	// enough for thousands of items a second.
	purgeDeleters = 8
	// purgeQueued bounds the keys a table's shard readers find ahead of
	// its deleters (purgequeue.go), a few MB.
	purgeQueued = 20_000
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

// purgeRun is one Purge call's shared state: its limits and its report.
type purgeRun struct {
	rate *rateLimiter // Options.PurgeRate items a second, for the whole run
	keys *keyLimiter  // Options.PurgeKeyRate items a second per partition key
	mu   sync.Mutex
	rep  PurgeReport
}

func (r *purgeRun) add(tables, items, pending int) {
	r.mu.Lock()
	r.rep.Tables += tables
	r.rep.Items += items
	r.rep.Pending += pending
	r.mu.Unlock()
}

// Purge works off the purges that are due, until none is left or ctx ends
// (a purge stopped by ctx resumes at the next call, or at once in another
// purger). It is safe to run in several processes at once.
func (s *Store) Purge(ctx context.Context) (PurgeReport, error) {
	due, err := s.duePurges(ctx)
	if err != nil {
		return PurgeReport{}, err
	}
	run := &purgeRun{rate: newRateLimiter(s.opts.PurgeRate), keys: newKeyLimiter(s.opts.PurgeKeyRate)}
	work := make(chan item)
	errs := make(chan error, purgeTablesAtOnce)
	var wg sync.WaitGroup
	for range min(purgeTablesAtOnce, len(due)) {
		wg.Go(func() {
			var first error
			for it := range work {
				if first != nil || ctx.Err() != nil {
					run.add(0, 0, 1)
					continue
				}
				if err := s.purgeLeased(ctx, it, run); err != nil && ctx.Err() == nil {
					first = err
				}
			}
			errs <- first
		})
	}
	for _, it := range due {
		work <- it
	}
	close(work)
	wg.Wait()
	close(errs)
	for e := range errs {
		err = cmp.Or(err, e)
	}
	return run.rep, err
}

// purgeLeased purges one deleted table under a lease, which a heartbeat
// renews until the table is done or the purge stops, and which is given
// back when the table is not done, so another purger can go on at once.
func (s *Store) purgeLeased(ctx context.Context, it item, run *purgeRun) error {
	lease := &purgeLeaseHolder{token: newGen()}
	leased, err := s.leasePurge(ctx, it, lease)
	if err != nil || !leased {
		run.add(0, 0, 1)
		return err
	}
	work, stop := context.WithCancel(ctx)
	beat := make(chan struct{})
	var lost atomic.Bool
	go func() {
		defer close(beat)
		s.heartbeat(work, it, lease, func() { lost.Store(true); stop() })
	}()
	items, done, err := s.purgeTable(work, it, run)
	stop()
	<-beat
	if done && !lost.Load() {
		err = s.finishPurge(ctx, it)
		done = err == nil
	}
	if !done {
		if !lost.Load() {
			s.releasePurge(ctx, it, lease)
		}
		run.add(0, items, 1)
		if lost.Load() || ctx.Err() != nil {
			return nil // another purger has it, or the purge is stopping
		}
		return err
	}
	run.add(1, items, 0)
	return nil
}

// heartbeat renews a lease every third of it until ctx ends, and calls
// lost when the lease is gone: taken over by another purger, or run out
// while renewals failed.
func (s *Store) heartbeat(ctx context.Context, it item, h *purgeLeaseHolder, lost func()) {
	t := time.NewTicker(max(s.leaseFor/3, time.Millisecond))
	defer t.Stop()
	until := time.Now().Add(s.leaseFor)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		renewed := time.Now()
		held, err := s.leasePurge(ctx, it, h)
		switch {
		case err == nil && !held:
			lost()
			return
		case err == nil:
			until = renewed.Add(s.leaseFor)
		case time.Now().After(until):
			lost()
			return
		}
	}
}

// releasePurge gives a purge item's lease back, so another purger may take
// the table at once. It runs even when ctx is done, briefly: it is what a
// stopping purge does last.
func (s *Store) releasePurge(ctx context.Context, it item, h *purgeLeaseHolder) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.RequestTimeout)
	defer cancel()
	_, _ = s.db.UpdateItem(cctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.opts.CatalogTable),
		Key:                       catalogKey(purgeAccount, stringAttr(it, catKey)),
		UpdateExpression:          aws.String("REMOVE #l, #b"),
		ConditionExpression:       aws.String("#b = :me"),
		ExpressionAttributeNames:  map[string]string{"#l": catLease, "#b": catLeaseBy},
		ExpressionAttributeValues: map[string]types.AttributeValue{":me": str(h.token)},
	})
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
	token string // written as LeaseBy: the holder may renew a lease that has not run out
}

// leasePurge takes a purge item for leaseFor, or renews the holder's own
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
	return true, nil
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

// purgeTable deletes one deleted table's items, reading all its shards at
// once (purgequeue.go), or its DynamoDB table. done is false when the items kept coming back (a
// lagging index) or the purge stopped; the purge item stays for a later
// call.
func (s *Store) purgeTable(ctx context.Context, it item, run *purgeRun) (items int, done bool, err error) {
	phys := stringAttr(it, catPhysical)
	id := stringAttr(it, catID)
	if id == "" {
		// A placement: DynamoDB's DeleteTable, which costs nothing.
		if phys == "" || phys == s.opts.CatalogTable || phys == s.opts.SharedTable {
			return 0, false, fmt.Errorf("%w: purge item %q names table %q", errCorrupt, stringAttr(it, catKey), phys)
		}
		return 0, true, s.deletePhysical(ctx, phys)
	}
	loc := &location{table: phys, prefix: sharedPrefix(stringAttr(it, catOf), id)}
	del := func(ctx context.Context, batch []purgeKey) error {
		if err := run.waitFor(ctx, loc, batch); err != nil {
			return err
		}
		keys := make([]item, len(batch))
		for i, k := range batch {
			keys[i] = k.key
		}
		return s.batchDelete(ctx, loc.table, keys)
	}
	for range purgeChecks {
		q := newPurgeQueue(purgeQueued, orderShards)
		read := func(ctx context.Context, shard int) error { return s.readShard(ctx, loc, shard, q) }
		found, err := q.run(ctx, orderShards, purgeDeleters, read, del)
		items += found
		if err != nil {
			return items, false, err
		}
		if found == 0 {
			return items, true, nil
		}
	}
	return items, false, nil
}

// readShard puts the keys of one shard of a deleted table in q, page by
// page: each main item's and its overflow items' (which the index does not
// hold, but whose number the main item's $chunks gives).
func (s *Store) readShard(ctx context.Context, loc *location, shard int, q *purgeQueue) error {
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
			return mapErr("purge: query "+loc.table, err)
		}
		var keys []purgeKey
		for _, ix := range out.Items {
			pk, rk := stringAttr(ix, attrPartitionKey), stringAttr(ix, attrRowKey)
			if !strings.HasPrefix(pk, loc.prefix) {
				// The index's hash key names the table, so this cannot
				// happen; never delete another table's item.
				return fmt.Errorf("%w: item (%q, %q) in shard of %s", errCorrupt, pk, rk, loc.prefix)
			}
			keys = append(keys, purgeKey{keyItem(pk, rk), shard})
			for i := 1; i <= max(metaOf(ix).chunks, 0); i++ {
				keys = append(keys, purgeKey{keyItem(pk, chunkRowKey(rk, i)), shard})
			}
		}
		if !q.put(keys) {
			return ctx.Err()
		}
		if out.LastEvaluatedKey == nil {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// waitFor waits until a batch of deletes fits the run's rate, and the rate
// of each partition key it writes: each item's PartitionKey, and the order
// index shard it leaves, all booked for the moment the batch is sent.
func (r *purgeRun) waitFor(ctx context.Context, loc *location, batch []purgeKey) error {
	perKey := map[string]int{}
	for _, k := range batch {
		perKey[stringAttr(k.key, attrPartitionKey)]++
		perKey[fmt.Sprintf("%s/index/%s%d", loc.table, loc.prefix, k.shard)]++
	}
	return sleep(ctx, r.keys.reserveTogether(time.Now(), r.rate, len(batch), perKey))
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
// backoff, for as long as ctx lasts (the purge's, the move's and the
// restore's runs are bounded). Each request is idempotent, so sending one
// again is harmless.
func (s *Store) batchWrite(ctx context.Context, table string, reqs []types.WriteRequest) error {
	op := "write items of " + table
	for attempt := 0; len(reqs) > 0; attempt++ {
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return mapErr(op, err)
			}
		}
		cctx, cancel := s.call(ctx)
		out, err := s.db.BatchWriteItem(cctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: reqs}})
		cancel()
		if err != nil {
			if errors.Is(mapErr("", err), store.ErrBusy) && attempt < maxWriteAttempts {
				continue
			}
			return mapErr(op, err)
		}
		reqs = out.UnprocessedItems[table]
	}
	return nil
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
