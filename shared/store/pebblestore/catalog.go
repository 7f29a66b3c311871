package pebblestore

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablebridge/tablebridge/shared/store"
)

// tableSet is which tables exist, by account and lower-cased name: read
// from the catalog at Open and kept by the writes that change the catalog,
// under the write lock, once their batch is applied. Checking that a table
// exists, which every write and every point read that misses does, is then
// a map look-up rather than an engine read. It holds names only; a table's
// info (its ACL) is read from the engine when asked for.
type tableSet struct {
	mu     sync.RWMutex
	tables map[string]map[string]struct{}
}

// loadTableSet reads the names of the catalog's tables.
func loadTableSet(db *pebble.DB) (*tableSet, error) {
	ts := &tableSet{tables: map[string]map[string]struct{}{}}
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte{spaceCatalog}, UpperBound: []byte{spaceCatalog + 1}})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: read catalog: %w", err)
	}
	for valid := it.First(); valid; valid = it.Next() {
		account, rest, err := readComponent(it.Key()[1:])
		if err == nil {
			var table []byte
			if table, _, err = readComponent(rest); err == nil {
				ts.add(string(account), string(table))
			}
		}
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("pebblestore: catalog key %q: %w", it.Key(), err)
		}
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("pebblestore: read catalog: %w", err)
	}
	return ts, nil
}

func (ts *tableSet) has(account, lowerTable string) bool {
	ts.mu.RLock()
	defer ts.mu.RUnlock()
	_, ok := ts.tables[account][lowerTable]
	return ok
}

func (ts *tableSet) add(account, lowerTable string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.tables[account] == nil {
		ts.tables[account] = map[string]struct{}{}
	}
	ts.tables[account][lowerTable] = struct{}{}
}

func (ts *tableSet) remove(account, lowerTable string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	delete(ts.tables[account], lowerTable)
}

// checkTable returns store.ErrTableNotFound unless the table exists.
func (s *Store) checkTable(account, table string) error {
	if account == "" || table == "" || !s.tables.has(account, strings.ToLower(table)) {
		return fmt.Errorf("pebblestore: %q: %w", table, store.ErrTableNotFound)
	}
	return nil
}
