package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// Copying one Azure table's items from one location to another, for a move
// into the shared table (move.go) and for a restore from a table that
// point-in-time recovery made (restore.go). Two passes over the source:
//
//  1. Copy: read the source in parts at once (the segments of a parallel
//     Scan, or the shards of the order index) and write each item as
//     movedItem makes it, 25 to a BatchWriteItem, copyLanes batches of
//     each part at a time. Items DynamoDB leaves unprocessed (it does
//     under throttling) are sent again after a backoff.
//  2. Verify: read the source again the same way and compare each item
//     with its copy, read with BatchGetItem (100 keys to a call, strongly
//     consistent; unprocessed keys are asked again). A copy that is
//     missing or differs, or fewer items than the copy wrote, fails the
//     copy: nothing is switched over.
//
// Both passes run under CopyOptions.Rate items a second, and never put
// more than one DynamoDB partition's capacity on one partition key: 1,000
// write units a second (an item costs one per KB, on its table key and,
// for an entity's main item, on its order index shard) and 3,000 read
// units a second (one per 4 KB, strongly consistent). A batch's units are
// booked on every key it touches for the moment it is sent
// (keyLimiter.reserveTogether). Writing an item again writes the same
// item, so a copy stopped anywhere is resumed by running it again from the
// start.
const (
	// copySegments is the number of segments of a parallel Scan. A
	// segment reads about 1 MB a request, one request at a time, in hash
	// order: one PartitionKey's items after the other, so a large Azure
	// partition keeps a segment on one key, which takes 1,000 items a
	// second at most. 16 segments keep 16 keys in flight, enough for
	// DefaultCopyRate when a few of them are such partitions, and read
	// far more than it (a Scan page takes tens of milliseconds), while
	// memory stays 16 pages of 1 MB and their batches in flight. More
	// segments would only add requests on small tables (each segment
	// reads at least one page).
	copySegments = 16
	// copyLanes is the batch requests in flight per part: at about 20 ms
	// per BatchWriteItem of 25 items, 16 segments of 2 carry 40,000 items
	// a second, past DefaultCopyRate, so the rate, not the round trips,
	// sets the pace.
	copyLanes = 2
	// DefaultCopyRate is CopyOptions.Rate's default, items a second: with
	// the order index's copy of each entity, 20,000 write units a second
	// of items up to 1 KB, half of what an on-demand table takes by
	// default (40,000), leaving the other half to the deployment's
	// traffic.
	DefaultCopyRate = 10_000
	// batchGetMax is BatchGetItem's limit of keys per call.
	batchGetMax = 100
	// keyWriteUnits and keyReadUnits are what one DynamoDB partition
	// takes a second ("Best practices for designing and using partition
	// keys effectively", Developer Guide).
	keyWriteUnits = 1000
	keyReadUnits  = 3000
)

// Progress receives the progress of a copy, per Azure table: a phase
// ("copying", "verifying") with its total (-1 when unknown), the items done,
// and its end. internal/migrate's displays are Progress.
type Progress interface {
	Begin(name, phase string, total, done int64)
	Add(name string, n int64)
	End(name string, err error)
}

// CopyOptions set the pace and the display of a copy (MoveToShared,
// RestoreTable).
type CopyOptions struct {
	// Rate bounds the items a second copied, and then verified.
	// Default DefaultCopyRate.
	Rate int
	// Progress receives the items copied and verified; nil shows nothing.
	Progress Progress
	// keyWriteUnits and keyReadUnits bound the units a second on one
	// partition key: DynamoDB's, lower in tests of the capacity model.
	keyWriteUnits, keyReadUnits int
}

// copySource is where a copy reads one Azure table's items: loc, read in
// parts at once (segments of a parallel Scan, or order index shards).
type copySource struct {
	loc   location
	parts int
	// page reads one page of a part from start (nil: the part's
	// beginning), and returns the key to go on from, nil after the last.
	page func(ctx context.Context, part int, start item) (items []item, next item, err error)
	// complete, when set, adds to a page the items it leaves out.
	complete func(ctx context.Context, page []item) ([]item, error)
}

// scanSource reads loc's items with a parallel Scan, strongly consistent
// or not: a table that no one writes (one point-in-time recovery made)
// reads the same either way, for half the read units. With a key prefix (a
// table that holds other Azure tables too), the Scan reads every item of
// the DynamoDB table and keeps the prefix's: DynamoDB bills what it reads,
// not what it returns.
func (s *Store) scanSource(loc location, consistent bool) *copySource {
	return &copySource{loc: loc, parts: copySegments, page: func(ctx context.Context, part int, start item) ([]item, item, error) {
		in := &dynamodb.ScanInput{
			TableName:         aws.String(loc.table),
			ConsistentRead:    aws.Bool(consistent),
			Segment:           aws.Int32(int32(part)),
			TotalSegments:     aws.Int32(copySegments),
			ExclusiveStartKey: start,
		}
		if loc.shared() {
			in.FilterExpression = aws.String("begins_with(#pk, :prefix)")
			in.ExpressionAttributeNames = map[string]string{"#pk": attrPartitionKey}
			in.ExpressionAttributeValues = map[string]types.AttributeValue{":prefix": str(loc.prefix)}
		}
		out, err := s.db.Scan(ctx, in)
		if err != nil {
			return nil, nil, err
		}
		return out.Items, out.LastEvaluatedKey, nil
	}}
}

// readPart hands every item of one part of src to each, page by page.
func (s *Store) readPart(ctx context.Context, src *copySource, part int, each func([]item) error) error {
	var start item
	for {
		var page []item
		var next item
		err := s.retryBusy(ctx, "read "+src.loc.table, func(cctx context.Context) (err error) {
			page, next, err = src.page(cctx, part, start)
			return err
		})
		if err == nil && src.complete != nil {
			page, err = src.complete(ctx, page)
		}
		if err == nil {
			err = each(page)
		}
		if err != nil || next == nil {
			return err
		}
		start = next
	}
}

// copyRun is one pass of a copy: its limits and its count.
type copyRun struct {
	name     string // the Azure table, for the progress display
	progress Progress
	rate     *rateLimiter // items a second, the whole pass
	keys     *keyLimiter  // units a second per partition key
	mu       sync.Mutex
	done     int64
}

func newCopyRun(name string, opts CopyOptions, keyUnits, keyUnitsDefault int) *copyRun {
	if opts.Rate <= 0 {
		opts.Rate = DefaultCopyRate
	}
	if keyUnits <= 0 {
		keyUnits = keyUnitsDefault
	}
	return &copyRun{name: name, progress: opts.Progress, rate: newRateLimiter(opts.Rate), keys: newKeyLimiter(keyUnits)}
}

func (r *copyRun) begin(phase string, total int64) {
	if r.progress != nil {
		r.progress.Begin(r.name, phase, total, 0)
	}
}

func (r *copyRun) add(n int) {
	r.mu.Lock()
	r.done += int64(n)
	r.mu.Unlock()
	if r.progress != nil {
		r.progress.Add(r.name, int64(n))
	}
}

func (r *copyRun) end(err error) int64 {
	if r.progress != nil {
		r.progress.End(r.name, err)
	}
	return r.done
}

// wait waits until a batch fits the pass's rate and the rate of each
// partition key it touches, units as unitsOf counts them: the item's
// table key, and with index (writes) the order index shard of a main
// item.
func (r *copyRun) wait(ctx context.Context, batch []item, unitsOf func(item) int, index bool) error {
	perKey := map[string]int{}
	for _, it := range batch {
		u := unitsOf(it)
		perKey["table "+stringAttr(it, attrPartitionKey)] += u
		if shard, ok := it[attrShard]; index && ok {
			perKey[fmt.Sprintf("index %v", shard)] += u
		}
	}
	return sleep(ctx, r.keys.reserveTogether(time.Now(), r.rate, len(batch), perKey))
}

func writeUnits(it item) int { return (itemSize(it) + 1023) / 1024 }
func readUnits(it item) int  { return (itemSize(it) + 4095) / 4096 }

// copyTable copies every item of src to dst (the copy pass, see above)
// and returns how many it wrote.
func (s *Store) copyTable(ctx context.Context, name string, src *copySource, dst *location, opts CopyOptions) (int64, error) {
	run := newCopyRun(name, opts, opts.keyWriteUnits, keyWriteUnits)
	run.begin("copying", -1)
	err := s.inBatches(ctx, src, batchWriteMax, func(ctx context.Context, batch []item) error {
		reqs := make([]types.WriteRequest, len(batch))
		moved := make([]item, len(batch))
		for i, it := range batch {
			moved[i] = movedItem(&src.loc, dst, it)
			reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: moved[i]}}
		}
		if err := run.wait(ctx, moved, writeUnits, true); err != nil {
			return err
		}
		if err := s.batchWrite(ctx, dst.table, reqs); err != nil {
			return err
		}
		run.add(len(batch))
		return nil
	})
	return run.end(err), err
}

// copyAndVerify copies every item of src to dst and verifies the copy
// (see above), and returns how many items it copied. The verification
// must find as many: fewer means an item of the source went during the
// copy (a write got past the freeze), and its copy is still at dst.
func (s *Store) copyAndVerify(ctx context.Context, name string, src *copySource, dst *location, opts CopyOptions) (int64, error) {
	n, err := s.copyTable(ctx, name, src, dst, opts)
	if err != nil {
		return n, err
	}
	verified, err := s.verifyTable(ctx, name, src, dst, n, opts)
	if err == nil && verified != n {
		err = fmt.Errorf("dynamostore: copy of table %q: %d items copied, but %d found to verify: the source changed during the copy", name, n, verified)
	}
	return n, err
}

// verifyTable reads every item of src again and compares it with its copy
// at dst (the verify pass, see above), and returns how many it compared;
// total is what the copy wrote, for the display.
func (s *Store) verifyTable(ctx context.Context, name string, src *copySource, dst *location, total int64, opts CopyOptions) (int64, error) {
	run := newCopyRun(name, opts, opts.keyReadUnits, keyReadUnits)
	run.begin("verifying", total)
	err := s.inBatches(ctx, src, batchGetMax, func(ctx context.Context, batch []item) error {
		want := make(map[string]item, len(batch))
		keys := make([]item, len(batch))
		moved := make([]item, len(batch))
		for i, it := range batch {
			moved[i] = movedItem(&src.loc, dst, it)
			pk, rk := stringAttr(moved[i], attrPartitionKey), stringAttr(moved[i], attrRowKey)
			want[pk+"\x00"+rk] = moved[i]
			keys[i] = keyItem(pk, rk)
		}
		if err := run.wait(ctx, moved, readUnits, false); err != nil {
			return err
		}
		got, err := s.batchGet(ctx, dst.table, keys)
		if err != nil {
			return err
		}
		for _, g := range got {
			k := stringAttr(g, attrPartitionKey) + "\x00" + stringAttr(g, attrRowKey)
			// DeepEqual follows the values' pointers, into lists and
			// maps too (another tool's attributes may be either).
			if w, ok := want[k]; ok && reflect.DeepEqual(g, w) {
				delete(want, k)
			}
		}
		if len(want) > 0 {
			w := want[slices.Min(slices.Collect(maps.Keys(want)))]
			return fmt.Errorf("dynamostore: copy of table %q: %d copies in %s are missing or differ from the original in %s, among them (%q, %q)",
				name, len(want), dst.table, src.loc.table, stringAttr(w, attrPartitionKey), stringAttr(w, attrRowKey))
		}
		run.add(len(batch))
		return nil
	})
	return run.end(err), err
}

// inBatches reads every item of src, all its parts at once, and hands the
// items to work in batches of up to size, copyLanes batches of each part
// at a time. Each part keeps its own lanes, so a part held back by a busy
// key (a large Azure partition, whose items a Scan segment reads one after
// the other) holds back no other part. The first error stops everything
// and is returned. An item that is not the source table's stops it too.
func (s *Store) inBatches(ctx context.Context, src *copySource, size int, work func(context.Context, []item) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	for part := range src.parts {
		batches := make(chan []item, copyLanes)
		wg.Go(func() {
			defer close(batches)
			err := s.readPart(ctx, src, part, func(page []item) error {
				for _, it := range page {
					// Azure keys hold no '/': after the prefix, one is
					// another table's prefix (a shared table read as a
					// per-table one).
					pk := stringAttr(it, attrPartitionKey)
					if rest, ok := strings.CutPrefix(pk, src.loc.prefix); !ok || strings.Contains(rest, "/") {
						return fmt.Errorf("%w: item (%q, %q) of %s is not one of the table's (key prefix %q)", errCorrupt,
							pk, stringAttr(it, attrRowKey), src.loc.table, src.loc.prefix)
					}
				}
				for len(page) > 0 {
					n := min(len(page), size)
					select {
					case batches <- page[:n:n]:
					case <-ctx.Done():
						return context.Cause(ctx)
					}
					page = page[n:]
				}
				return nil
			})
			if err != nil {
				cancel(err)
			}
		})
		for range copyLanes {
			wg.Go(func() {
				for batch := range batches {
					if ctx.Err() != nil {
						continue // stopping: drain
					}
					if err := work(ctx, batch); err != nil {
						cancel(err)
					}
				}
			})
		}
	}
	wg.Wait()
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// batchGet reads up to 100 items by key, strongly consistent, asking
// again after a backoff for the keys DynamoDB leaves unprocessed (it does
// under throttling, and past 16 MB of answer). Missing items are not in
// the result.
func (s *Store) batchGet(ctx context.Context, table string, keys []item) ([]item, error) {
	var got []item
	req := types.KeysAndAttributes{Keys: keys}
	for attempt := 0; len(req.Keys) > 0; attempt++ {
		req.ConsistentRead = aws.Bool(true)
		if attempt > 0 {
			if err := backoff(ctx, attempt); err != nil {
				return nil, err
			}
		}
		var out *dynamodb.BatchGetItemOutput
		err := s.retryBusy(ctx, "read items of "+table, func(cctx context.Context) (err error) {
			out, err = s.db.BatchGetItem(cctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{table: req}})
			return err
		})
		if err != nil {
			return nil, err
		}
		got = append(got, out.Responses[table]...)
		req = out.UnprocessedKeys[table]
	}
	return got, nil
}

// retryBusy sends a read, and sends it again after a backoff while
// DynamoDB throttles it (beyond the client's own retries), up to
// maxWriteAttempts times: a long copy meets throttling now and then, and
// should slow down, not stop.
func (s *Store) retryBusy(ctx context.Context, op string, send func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		cctx, cancel := s.call(ctx)
		err := send(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if !errors.Is(mapErr("", err), store.ErrBusy) || attempt+1 >= maxWriteAttempts {
			return mapErr(op, err)
		}
		if err := backoff(ctx, attempt+1); err != nil {
			return err
		}
	}
}
