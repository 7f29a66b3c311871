package dynamostore

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// Moving a placement (an earlier release's table in a DynamoDB table of its
// own, location.go) into the shared table (`tablebridge dynamodb
// move-to-shared`), one table at a time:
//
//  1. Freeze: the catalog entry gets catMoving, the id the table will have.
//     From then on its entity writes answer store.ErrBusy (503 ServerBusy,
//     which the SDKs retry) before they are sent; reads go on from the old
//     table. The move then waits MoveSettle, so that no process still
//     writes through a look-up from before the freeze (cached for
//     CatalogCacheTTL) and no write sent before it is still on its way.
//  2. Copy every item of the old table to the shared table under the new
//     id, attribute for attribute (the keys gain the prefix, the order
//     index attributes are computed again): copy.go's parallel Scan and
//     batched writes.
//  3. Verify: read every old item again and compare it with its copy
//     (copy.go, BatchGetItem).
//  4. Switch, in one transaction: the entry names the shared table and the
//     id, the freeze ends, and a purge item hands the old DynamoDB table to
//     the purge.
//
// A move stopped anywhere resumes from the start of its table: the freeze
// keeps its id, and copying an item again writes the same item. Writes to
// the table are refused from the freeze to the switch (MoveSettle plus the
// copy and the verify); reads never stop.

const catMoving = "Moving" // a placement's entry being moved: the id it will have

// MoveReport says what MoveToShared did to one table.
type MoveReport struct {
	Items    int  // items copied and verified
	Moved    bool // false: the table was in the shared table already
	Frozen   time.Duration
	Physical string // the DynamoDB table it came from
}

// MoveToShared moves one placement into the shared table (see above), at
// the pace opts sets.
func (s *Store) MoveToShared(ctx context.Context, account, table string, opts CopyOptions) (MoveReport, error) {
	var rep MoveReport
	it, err := s.readEntry(ctx, "move table", account, table)
	if err != nil {
		return rep, err
	}
	if it == nil || stringAttr(it, catState) != stateActive {
		return rep, fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableNotFound)
	}
	if stringAttr(it, catID) != "" {
		return rep, nil
	}
	if stringAttr(it, catRestoring) != "" {
		return rep, fmt.Errorf("dynamostore: table %q is being restored; move it once the restore is done: %w", table, store.ErrBusy)
	}
	old, err := entryLocation(account, table, it)
	if err != nil {
		return rep, err
	}
	rep.Physical = old.table
	id := stringAttr(it, catMoving)
	frozeAt := time.Now()
	if id == "" {
		id = newGen()
		if it, err = s.freeze(ctx, account, table, it, id); err != nil {
			return rep, err
		}
	}
	s.cache.drop(account, table)
	if err := sleep(ctx, s.opts.MoveSettle); err != nil {
		return rep, err
	}
	dst := location{table: s.opts.SharedTable, prefix: sharedPrefix(account, id)}
	src := s.scanSource(old, true)
	n, err := s.copyAndVerify(ctx, table, src, &dst, opts)
	if err != nil {
		return rep, err
	}
	if err := s.switchToShared(ctx, account, table, it); err != nil {
		return rep, err
	}
	s.cache.drop(account, table)
	rep.Items, rep.Moved, rep.Frozen = int(n), true, time.Since(frozeAt)
	return rep, nil
}

// freeze marks the entry it (as read) moving to the id, with its copies,
// and returns the entry as written.
func (s *Store) freeze(ctx context.Context, account, table string, it item, id string) (item, error) {
	next := maps.Clone(it)
	next[catMoving] = str(id)
	next[catRev] = str(newGen())
	err := s.replaceEntry(ctx, "move table", account, table, it, next)
	if _, changed := cancelledOnCondition(err, 0); changed {
		return nil, fmt.Errorf("dynamostore: table %q changed while its move began; run the move again: %w", table, store.ErrBusy)
	}
	return next, err
}

// movedItem is an item of src as it is stored at dst: the PartitionKey
// gains dst's prefix, and a main item's order index attributes are computed
// for its new keys (overflow items have none).
func movedItem(src, dst *location, it item) item {
	out := maps.Clone(it)
	pk := dst.prefix + stringAttr(it, attrPartitionKey)[len(src.prefix):]
	out[attrPartitionKey] = str(pk)
	if _, main := it[attrShard]; main {
		out[attrShard], out[attrOrder] = orderAttrs(dst, pk, stringAttr(it, attrRowKey))
	} else if _, chunk := splitRowKey(stringAttr(it, attrRowKey)); chunk == 0 {
		// A main item written before the order index existed.
		out[attrShard], out[attrOrder] = orderAttrs(dst, pk, stringAttr(it, attrRowKey))
	}
	return out
}

// switchToShared makes the frozen entry it (as read) name the shared table
// and the id it is moving to, with its copies, and hands the old DynamoDB
// table to the purge, in one transaction.
func (s *Store) switchToShared(ctx context.Context, account, table string, it item) error {
	phys := stringAttr(it, catPhysical)
	next := maps.Clone(it)
	delete(next, catMoving)
	next[catPhysical] = str(s.opts.SharedTable)
	next[catID] = it[catMoving]
	next[catRev] = str(newGen())
	pi := purgeItem(account, table, phys, "", formatDeletedAt(time.Now()))
	err := s.replaceEntry(ctx, "move table", account, table, it, next,
		types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.opts.CatalogTable), Item: pi}})
	if _, changed := cancelledOnCondition(err, 0); changed {
		return fmt.Errorf("dynamostore: table %q changed during its move (deleted?); nothing was switched: %w", table, store.ErrBusy)
	}
	return err
}
