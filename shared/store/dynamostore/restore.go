package dynamostore

import (
	"cmp"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// Restoring one Azure table (`tablebridge dynamodb restore-table`).
// DynamoDB's point-in-time recovery restores a whole DynamoDB table, into
// a new one: for the shared table, every Azure table of the deployment as
// it was at that time. RestoreTable copies one Azure table's items from
// such a table back into the deployment, under the table's name or a new
// one (docs/dynamodb.md, "Restoring one Azure table"):
//
//  1. The source: the restored table's items under "<account>/<id>/", the
//     id being the table's at that time (from the catalog restored to the
//     same time, or given). The order index, which a restore rebuilds,
//     reads just those items; without it, a Scan reads the whole restored
//     table. A restored per-table table (an earlier release's layout) is
//     the Azure table whole.
//  2. The target: created frozen (catRestoring names the source) if the
//     name is free, or an existing table frozen after MoveSettle, as a
//     move freezes (see move.go): only an empty one, unless Merge. Writes
//     to it answer 503 ServerBusy until the restore ends; reads see the
//     entities copied so far.
//  3. Copy and verify (copy.go), under the target's id.
//  4. The freeze ends, in one catalog write.
//
// A restore stopped anywhere resumes when run again with the same source:
// catRestoring says the target's entities are its own. A restore that
// will not be finished is ended by AbandonRestore, or by deleting the
// target.

// catRestoring marks a table being restored into: the source, "<DynamoDB
// table>/<key prefix>". Writes to it answer store.ErrBusy.
const catRestoring = "Restoring"

// Restore names an Azure table in a DynamoDB table that point-in-time
// recovery made, and where to restore it.
type Restore struct {
	// From is the restored DynamoDB table: of the shared table, or of an
	// earlier release's per-table table.
	From string
	// Catalog is the catalog table restored to the same time, which holds
	// the Azure table's id at that time; or ID gives the id. A per-table
	// From needs neither.
	Catalog string
	ID      string
	// Account and Table name the Azure table as it was.
	Account, Table string
	// As is the name to restore it under; "" is Table.
	As string
	// Merge allows a target that has entities: restored entities replace
	// those with their keys, the others stay. Without it, such a target
	// is refused.
	Merge bool
}

// RestoreReport says what RestoreTable did.
type RestoreReport struct {
	Items   int    // items copied and verified (entities and their overflow items)
	Created bool   // the target table was created
	Source  string // where the items were read, and how
	Frozen  time.Duration
}

// RestoreTable copies one Azure table from a restored DynamoDB table into
// the deployment (see above), at the pace opts sets; a new target goes to
// the shared table.
func (s *Store) RestoreTable(ctx context.Context, r Restore, opts CopyOptions) (RestoreReport, error) {
	var rep RestoreReport
	target := cmp.Or(r.As, r.Table)
	origin, err := s.restoreSource(ctx, r)
	if err != nil {
		return rep, err
	}
	src := origin.src
	rep.Source = origin.how
	marker := src.loc.table + "/" + src.loc.prefix
	created := item{catRestoring: str(marker)}
	if origin.acl != nil {
		created[catACL] = origin.acl
	}
	it, found, err := s.restoreTarget(ctx, r.Account, target, marker, created, r.Merge)
	if err != nil {
		return rep, err
	}
	rep.Created = found == targetCreated
	frozeAt := time.Now()
	if found != targetCreated {
		// Frozen by this run or an earlier one: writes sent before the
		// freeze must land before the copy, as in a move.
		if err := sleep(ctx, s.opts.MoveSettle); err != nil {
			return rep, err
		}
	}
	if found == targetFrozen && !r.Merge {
		// An entity written between the look and the freeze.
		if err := s.refuseEntities(ctx, r.Account, target); err != nil {
			return rep, errors.Join(err, s.endRestore(ctx, r.Account, target, it))
		}
	}
	dst, err := entryLocation(r.Account, target, it)
	if err != nil {
		return rep, err
	}
	n, err := s.copyAndVerify(ctx, target, src, &dst, opts)
	if err != nil {
		return rep, err
	}
	if err := s.endRestore(ctx, r.Account, target, it); err != nil {
		return rep, err
	}
	rep.Items, rep.Frozen = int(n), time.Since(frozeAt)
	return rep, nil
}

// restoreOrigin is what a restore reads: the items, how (for the report),
// and the table's stored access policies in the restored catalog, which a
// target the restore creates gets too.
type restoreOrigin struct {
	src *copySource
	how string
	acl types.AttributeValue
}

// restoreSource finds the Azure table's items in r.From.
func (s *Store) restoreSource(ctx context.Context, r Restore) (*restoreOrigin, error) {
	if r.From == "" || r.From == s.opts.SharedTable || r.From == s.opts.CatalogTable {
		return nil, fmt.Errorf("dynamostore: restore from %q: name the table point-in-time recovery made, not one of the deployment's own", r.From)
	}
	desc, err := s.describe(ctx, r.From)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: restore from %s: %w", r.From, err)
	}
	if !entityKeySchema(desc.KeySchema) {
		return nil, fmt.Errorf("dynamostore: restore from %s: its key is not (PartitionKey, RowKey): not a table of tablebridge's entities", r.From)
	}
	shared, err := s.holdsSharedKeys(ctx, desc)
	if err != nil {
		return nil, err
	}
	id := r.ID
	origin := &restoreOrigin{}
	if r.Catalog != "" {
		entry, err := s.restoredEntry(ctx, r)
		if err != nil {
			return nil, err
		}
		was := stringAttr(entry, catID)
		switch {
		case id != "" && was != id:
			return nil, fmt.Errorf("dynamostore: restore: the id given, %s, is not table %q's in %s (%q)", id, r.Table, r.Catalog, was)
		case was == "" && shared:
			return nil, fmt.Errorf("dynamostore: restore: in %s, table %q had a DynamoDB table of its own (%s); restore that one, not %s",
				r.Catalog, r.Table, cmp.Or(stringAttr(entry, catPhysical), "named after the table"), r.From)
		}
		id = was
		origin.acl = entry[catACL]
	}
	if !shared {
		if id != "" {
			return nil, fmt.Errorf("dynamostore: restore: table %q had id %s, in the shared table, but %s is not a restored shared table", r.Table, id, r.From)
		}
		origin.src, origin.how = s.scanSource(location{table: r.From}, false), r.From+", whole (a per-table table)"
		return origin, nil
	}
	if b, err := hex.DecodeString(id); err != nil || len(b) != 8 {
		return nil, fmt.Errorf("dynamostore: restore from %s, a restored shared table: give the table's id then (16 hex digits; the restored catalog has it), not %q", r.From, id)
	}
	loc := location{table: r.From, prefix: sharedPrefix(r.Account, id)}
	if gsi := orderIndexOf(desc); gsi != nil && gsi.IndexStatus == types.IndexStatusActive {
		origin.src, origin.how = s.indexSource(loc), fmt.Sprintf("%s, the items of id %s, through its order index", r.From, id)
	} else {
		origin.src, origin.how = s.scanSource(loc, false), fmt.Sprintf("%s, the items of id %s, found by a Scan of every item (the table has no active order index)", r.From, id)
	}
	return origin, nil
}

// holdsSharedKeys reports whether a table of entities is (a restore of)
// a shared table, whose keys start with "<account>/<id>/", rather than a
// per-table table: the order index's hash key is a string there, a number
// in a per-table table. Restored without its indexes, the table no longer
// says, and one item does: Azure keys never hold '/'.
func (s *Store) holdsSharedKeys(ctx context.Context, desc *types.TableDescription) (bool, error) {
	for _, ad := range desc.AttributeDefinitions {
		if aws.ToString(ad.AttributeName) == attrShard {
			return ad.AttributeType == types.ScalarAttributeTypeS, nil
		}
	}
	var out *dynamodb.ScanOutput
	err := s.retryBusy(ctx, "scan "+aws.ToString(desc.TableName), func(cctx context.Context) (err error) {
		out, err = s.db.Scan(cctx, &dynamodb.ScanInput{TableName: desc.TableName, Limit: aws.Int32(1)})
		return err
	})
	if err != nil {
		return false, err
	}
	return len(out.Items) > 0 && strings.Contains(stringAttr(out.Items[0], attrPartitionKey), "/"), nil
}

// indexSource reads loc's items through its order index, a shard per
// part: only the Azure table's own items, where a Scan of a table that
// holds every Azure table would read them all. The index holds main items
// only; the overflow items of a large entity (its $chunks) are read from
// the table by key. The index is eventually consistent, so this is for a
// table no one writes: one point-in-time recovery made.
func (s *Store) indexSource(loc location) *copySource {
	return &copySource{loc: loc, parts: orderShards,
		page: func(ctx context.Context, shard int, start item) ([]item, item, error) {
			out, err := s.db.Query(ctx, &dynamodb.QueryInput{
				TableName:                 aws.String(loc.table),
				IndexName:                 aws.String(orderIndex),
				KeyConditionExpression:    aws.String("#s = :s"),
				ExpressionAttributeNames:  map[string]string{"#s": attrShard},
				ExpressionAttributeValues: map[string]types.AttributeValue{":s": loc.shardValue(shard)},
				ExclusiveStartKey:         start,
			})
			if err != nil {
				return nil, nil, err
			}
			return out.Items, out.LastEvaluatedKey, nil
		},
		complete: func(ctx context.Context, page []item) ([]item, error) {
			var overflow []item
			for _, it := range page {
				pk, rk := stringAttr(it, attrPartitionKey), stringAttr(it, attrRowKey)
				for i := 1; i <= metaOf(it).chunks; i++ {
					overflow = append(overflow, keyItem(pk, chunkRowKey(rk, i)))
				}
			}
			for len(overflow) > 0 {
				keys := overflow[:min(len(overflow), batchGetMax)]
				overflow = overflow[len(keys):]
				got, err := s.batchGet(ctx, loc.table, keys)
				if err != nil {
					return nil, err
				}
				if len(got) != len(keys) {
					return nil, fmt.Errorf("%w: %s: %d of %d overflow items of entities are missing", errCorrupt, loc.table, len(keys)-len(got), len(keys))
				}
				page = append(page, got...)
			}
			return page, nil
		}}
}

// entityKeySchema reports whether a key schema is the one of the tables
// holding entities.
func entityKeySchema(ks []types.KeySchemaElement) bool {
	want := keySchema(attrPartitionKey, attrRowKey)
	if len(ks) != len(want) {
		return false
	}
	for i := range ks {
		if aws.ToString(ks[i].AttributeName) != aws.ToString(want[i].AttributeName) || ks[i].KeyType != want[i].KeyType {
			return false
		}
	}
	return true
}

// restoredEntry reads the Azure table's entry in the restored catalog:
// active or deleted, it names where the items were.
func (s *Store) restoredEntry(ctx context.Context, r Restore) (item, error) {
	cctx, cancel := s.call(ctx)
	defer cancel()
	out, err := s.db.GetItem(cctx, &dynamodb.GetItemInput{
		TableName:      aws.String(r.Catalog),
		Key:            tableKey(r.Account, r.Table),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("dynamostore: restore: read the restored catalog %s: %w", r.Catalog, mapErr("", err))
	}
	if out.Item == nil {
		return nil, fmt.Errorf("dynamostore: restore: the restored catalog %s has no table %q of account %q", r.Catalog, r.Table, r.Account)
	}
	return out.Item, nil
}

// How restoreTarget found the target.
type restoreTargetState int

const (
	targetCreated restoreTargetState = iota // created frozen now
	targetFrozen                            // an existing table, frozen now
	targetResumed                           // frozen by an earlier run of the same restore
)

// restoreTarget finds or makes the table a restore writes to, frozen with
// marker, and returns its entry as written. created are the attributes a
// new target gets (the marker among them).
func (s *Store) restoreTarget(ctx context.Context, account, table, marker string, created item, merge bool) (item, restoreTargetState, error) {
	for range entryWriteAttempts {
		it, err := s.readEntry(ctx, "restore table", account, table)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case it == nil || stringAttr(it, catState) != stateActive:
			_, err := s.createEntry(ctx, account, table, created)
			if errors.Is(err, store.ErrTableExists) {
				continue // created meanwhile: look again
			}
			if err != nil {
				return nil, 0, err
			}
			it, err := s.readEntry(ctx, "restore table", account, table)
			if err == nil && stringAttr(it, catRestoring) != marker {
				err = fmt.Errorf("dynamostore: restore: table %q changed as it was created; run the restore again: %w", table, store.ErrBusy)
			}
			return it, targetCreated, err
		case stringAttr(it, catRestoring) == marker:
			return it, targetResumed, nil
		case stringAttr(it, catRestoring) != "":
			return nil, 0, fmt.Errorf("dynamostore: table %q is being restored from %s; finish that restore, or abandon it: %w", table, stringAttr(it, catRestoring), store.ErrBusy)
		case stringAttr(it, catMoving) != "":
			return nil, 0, fmt.Errorf("dynamostore: table %q is being moved to the shared table; restore once the move is done: %w", table, store.ErrBusy)
		}
		if !merge {
			if err := s.refuseEntities(ctx, account, table); err != nil {
				return nil, 0, err
			}
		}
		next := maps.Clone(it)
		next[catRestoring] = str(marker)
		next[catRev] = str(newGen())
		err = s.replaceEntry(ctx, "restore table", account, table, it, next)
		if _, changed := cancelledOnCondition(err, 0); changed {
			continue
		}
		return next, targetFrozen, err
	}
	return nil, 0, fmt.Errorf("dynamostore: restore: the entry of table %q kept changing: %w", table, store.ErrBusy)
}

// refuseEntities fails when the table has an entity: without Merge, a
// restore writes only into an empty table.
func (s *Store) refuseEntities(ctx context.Context, account, table string) error {
	page, err := s.QueryEntities(ctx, account, table, store.Query{Top: 1})
	if err != nil {
		return err
	}
	if len(page.Entities) > 0 {
		return fmt.Errorf("dynamostore: restore: table %q has entities; restore under another name, delete it first, or merge into it: %w", table, store.ErrTableExists)
	}
	return nil
}

// endRestore lifts the freeze of the entry it (as written by the restore).
func (s *Store) endRestore(ctx context.Context, account, table string, it item) error {
	next := maps.Clone(it)
	delete(next, catRestoring)
	next[catRev] = str(newGen())
	err := s.replaceEntry(ctx, "restore table", account, table, it, next)
	if _, changed := cancelledOnCondition(err, 0); changed {
		return fmt.Errorf("dynamostore: table %q changed during its restore (deleted?); its freeze was not lifted: %w", table, store.ErrBusy)
	}
	return err
}

// AbandonRestore lifts the freeze of a restore that will not be finished:
// the table takes writes again, with what the restore copied so far. It
// reports whether the table was being restored.
func (s *Store) AbandonRestore(ctx context.Context, account, table string) (bool, error) {
	it, err := s.readEntry(ctx, "restore table", account, table)
	if err != nil || it == nil || stringAttr(it, catRestoring) == "" || stringAttr(it, catState) != stateActive {
		return false, err
	}
	return true, s.endRestore(ctx, account, table, it)
}
