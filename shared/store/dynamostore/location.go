package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tablebridge/tablebridge/shared/store"
)

// location is where an Azure table's entities live, as its catalog entry
// says: the shared table under a key prefix (every table Create Table
// creates, see doc.go), or a placement, a DynamoDB table of the table's
// own, which releases before the shared table created (docs/design.md,
// "One item format"). An entry with an id is in the shared table; one
// without names its own DynamoDB table (catPhysical).
//
// A placement is served where it is: reads, writes, queries through its
// order index or, on a table created without one, by Scan (merge.go);
// Delete Table hands its DynamoDB table to the purge, and `dynamodb
// move-to-shared` (move.go) brings it into the shared table. Nothing
// creates one any more.
//
// The prefix is part of every stored PartitionKey of the table: the hash key
// attribute holds "<account>/<id>/" followed by the encoded PartitionKey.
// Azure forbids '/' in keys and account names, so the prefix ends
// unambiguously. The code below the store's methods works on stored keys
// and so never needs to know the placement, except where a key is encoded
// (pk), decoded (unpk) or bounded (maxPKBytes), and for the order index's
// hash key (shardValue).
type location struct {
	table  string // the DynamoDB table
	prefix string // the shared table: "<account>/<id>/"; "" in a placement
	// frozen: the table is being moved into the shared layout (move.go)
	// or restored (restore.go); writes answer store.ErrBusy until that
	// ends.
	frozen bool
}

// sharedPrefix is the key prefix of the Azure table with catalog id id.
func sharedPrefix(account, id string) string { return account + "/" + id + "/" }

func (l *location) shared() bool { return l.prefix != "" }

// pk is the stored form of an Azure PartitionKey.
func (l *location) pk(k string) string { return l.prefix + encodeKey(k) }

// unpk is the Azure PartitionKey of a stored one.
func (l *location) unpk(s string) string { return decodeKey(strings.TrimPrefix(s, l.prefix)) }

// maxPKBytes is how many bytes of encoded PartitionKey the hash key has
// room for after the prefix.
func (l *location) maxPKBytes() int { return maxHashKeyBytes - len(l.prefix) }

// shardValue is the order index's hash key of shard n: the number in a
// placement, the prefix and the number in the shared table, whose index
// holds every Azure table.
func (l *location) shardValue(n int) types.AttributeValue {
	if l.shared() {
		return &types.AttributeValueMemberS{Value: l.prefix + strconv.Itoa(n)}
	}
	return &types.AttributeValueMemberN{Value: strconv.Itoa(n)}
}

// locations caches catalog look-ups: entity operations must know where
// their table lives, and reading the catalog for each would double their
// requests. An entry lives CatalogCacheTTL; this process's own
// DeleteTable drops it at once. Another process (another Lambda execution
// environment) keeps serving a deleted table for at most the TTL, which is
// why a deleted name can be created again only after recreateDelay, and its
// items are purged only after purgeGrace (see purge.go).
type locations struct {
	mu      sync.Mutex
	entries map[string]cachedLocation
}

type cachedLocation struct {
	loc     location
	expires time.Time
}

// maxCachedLocations bounds the cache; past it the cache starts over, which
// costs one catalog read per table in use.
const maxCachedLocations = 100_000

func locationKey(account, table string) string { return account + "/" + strings.ToLower(table) }

func (c *locations) get(account, table string) (location, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[locationKey(account, table)]
	if !ok || time.Now().After(e.expires) {
		return location{}, false
	}
	return e.loc, true
}

func (c *locations) put(account, table string, loc location, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedLocations {
		c.entries = make(map[string]cachedLocation)
	}
	c.entries[locationKey(account, table)] = cachedLocation{loc: loc, expires: time.Now().Add(ttl)}
}

func (c *locations) drop(account, table string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, locationKey(account, table))
}

// onTable runs an entity operation on the table's location. With
// Options.ConfirmTable, an operation that started from a cached look-up
// also reads the catalog entry, concurrently, and its answer counts only
// when the entry still names the same table: a table another process
// deleted is missing at once, for every process, at the price of a catalog
// read per operation (which the operation's own request hides in latency).
// A write sent to a table deleted meanwhile lands under the old id, where
// the purge, PurgeGrace later, finds it; the client is told the table is
// missing. When the name now holds another table (created again), the
// operation runs once more on it.
func (s *Store) onTable(ctx context.Context, account, table string, write bool, op func(location) error) error {
	loc, cached, err := s.locateCached(ctx, account, table)
	if err != nil {
		return err
	}
	if write && loc.frozen {
		return fmt.Errorf("dynamostore: table %q is being moved to the shared table or restored; writes resume when that ends: %w", table, store.ErrBusy)
	}
	if !cached || !s.opts.ConfirmTable {
		return s.sharedTableErr(ctx, loc, op(loc))
	}
	type entry struct {
		loc location
		err error
	}
	confirm := make(chan entry, 1)
	go func() {
		l, err := s.readLocation(ctx, account, table)
		confirm <- entry{l, err}
	}()
	opErr := s.sharedTableErr(ctx, loc, op(loc))
	fresh := <-confirm
	switch {
	case errors.Is(fresh.err, store.ErrTableNotFound):
		s.cache.drop(account, table)
		return fresh.err
	case fresh.err != nil && write && opErr == nil:
		// Applied, but to a table that may have been deleted meanwhile.
		return fmt.Errorf("dynamostore: the table of a write could not be confirmed: %w: %w", store.ErrOutcomeUnknown, fresh.err)
	case fresh.err != nil:
		return fresh.err
	case fresh.loc.table != loc.table || fresh.loc.prefix != loc.prefix:
		// Deleted and created again, or moved to the shared table.
		return s.onTable(ctx, account, table, write, op)
	}
	return opErr
}

// locate finds where the table's entities live, as its catalog entry says:
// one consistent GetItem of one of the entry's copies, cached for
// CatalogCacheTTL. A table missing from the catalog, or not active, is
// store.ErrTableNotFound.
func (s *Store) locate(ctx context.Context, account, table string) (location, error) {
	loc, _, err := s.locateCached(ctx, account, table)
	return loc, err
}

// locateCached is locate, and whether the location came from the cache.
func (s *Store) locateCached(ctx context.Context, account, table string) (location, bool, error) {
	if loc, ok := s.cache.get(account, table); ok {
		return loc, true, nil
	}
	loc, err := s.readLocation(ctx, account, table)
	return loc, false, err
}

// readLocation reads the table's catalog entry, from one of its copies
// (copies.go), and caches its location.
func (s *Store) readLocation(ctx context.Context, account, table string) (location, error) {
	it, err := s.readTableEntry(ctx, "find table", account, table)
	if err != nil {
		return location{}, err
	}
	if it == nil || stringAttr(it, catState) != stateActive {
		return location{}, fmt.Errorf("dynamostore: table %q: %w", table, store.ErrTableNotFound)
	}
	loc, err := entryLocation(account, table, it)
	if err != nil {
		return location{}, err
	}
	s.cache.put(account, table, loc, s.opts.CatalogCacheTTL)
	return loc, nil
}

// entryLocation reads where a catalog entry's table lives: an entry with an
// id is in the shared table; one without (every entry an earlier release
// wrote before the shared table existed) is a placement, whose entry has
// always named its DynamoDB table.
func entryLocation(account, table string, it item) (location, error) {
	phys := stringAttr(it, catPhysical)
	if phys == "" {
		return location{}, fmt.Errorf("%w: catalog entry of table %q names no DynamoDB table", errCorrupt, table)
	}
	frozen := stringAttr(it, catMoving) != "" || stringAttr(it, catRestoring) != ""
	if id := stringAttr(it, catID); id != "" {
		return location{table: phys, prefix: sharedPrefix(account, id), frozen: frozen}, nil
	}
	return location{table: phys, frozen: frozen}, nil
}
