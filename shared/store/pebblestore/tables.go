package pebblestore

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/record"
)

// CreateTable creates the table, keeping the case of its name.
func (s *Store) CreateTable(ctx context.Context, account, table string) (info store.TableInfo, err error) {
	if err := s.enter(ctx); err != nil {
		return store.TableInfo{}, err
	}
	defer s.leave(&err)
	if account == "" || table == "" {
		return store.TableInfo{}, fmt.Errorf("pebblestore: create table: empty account or table name")
	}
	info = store.TableInfo{Name: table}
	lowerName := strings.ToLower(table)
	key := catalogKey(account, lowerName)
	err = s.commit(ctx, func() (*pebble.Batch, error) {
		if s.tables.has(account, lowerName) {
			return nil, fmt.Errorf("pebblestore: %q: %w", table, store.ErrTableExists)
		}
		b := s.db.NewBatch()
		if err := b.Set(key, record.EncodeTableInfo(info), nil); err != nil {
			b.Close()
			return nil, err
		}
		return b, nil
	}, func() { s.tables.add(account, lowerName) })
	if err != nil {
		return store.TableInfo{}, err
	}
	return info, nil
}

// DeleteTable removes the table's catalog entry and, in the same batch,
// its entities with one range deletion: the cost does not grow with the
// table, and compactions drop the entities' space later.
func (s *Store) DeleteTable(ctx context.Context, account, table string) (err error) {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave(&err)
	lower := strings.ToLower(table)
	return s.commit(ctx, func() (*pebble.Batch, error) {
		if err := s.checkTable(account, table); err != nil {
			return nil, err
		}
		b := s.db.NewBatch()
		prefix := tablePrefix(account, lower)
		err := b.Delete(catalogKey(account, lower), nil)
		if err == nil {
			err = b.DeleteRange(prefix, componentPast(bytes.Clone(prefix)), nil)
		}
		if err != nil {
			b.Close()
			return nil, err
		}
		return b, nil
	}, func() { s.tables.remove(account, lower) })
}

// GetTable returns the table's info with its ACL.
func (s *Store) GetTable(ctx context.Context, account, table string) (info store.TableInfo, err error) {
	if err := s.enter(ctx); err != nil {
		return store.TableInfo{}, err
	}
	defer s.leave(&err)
	info, err = s.tableInfo(account, table)
	if werr := s.sync.Wait(ctx, s.sync.appliedCount()); werr != nil {
		return store.TableInfo{}, werr
	}
	return info, err
}

func (s *Store) tableInfo(account, table string) (store.TableInfo, error) {
	if account == "" || table == "" {
		return store.TableInfo{}, fmt.Errorf("pebblestore: %q: %w", table, store.ErrTableNotFound)
	}
	v, found, err := s.get(catalogKey(account, strings.ToLower(table)))
	if err != nil {
		return store.TableInfo{}, fmt.Errorf("pebblestore: read catalog: %w", err)
	}
	if !found {
		return store.TableInfo{}, fmt.Errorf("pebblestore: %q: %w", table, store.ErrTableNotFound)
	}
	info, err := record.DecodeTableInfo(v)
	if err != nil {
		return store.TableInfo{}, fmt.Errorf("pebblestore: table %q: %w", table, err)
	}
	return info, nil
}

// QueryTables lists the account's tables in lower-cased name order.
func (s *Store) QueryTables(ctx context.Context, account string, q store.TableQuery) (page store.TablePage, err error) {
	if err := s.enter(ctx); err != nil {
		return store.TablePage{}, err
	}
	defer s.leave(&err)
	if account == "" {
		return page, nil
	}
	prefix := catalogPrefix(account)
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: componentPast(bytes.Clone(prefix))})
	if err != nil {
		return store.TablePage{}, fmt.Errorf("pebblestore: query tables: %w", err)
	}
	seen := s.sync.appliedCount()
	page, err = readTables(it, prefix, q)
	if cerr := it.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("pebblestore: query tables: %w", cerr)
	}
	if err != nil {
		return store.TablePage{}, err
	}
	if err := s.sync.Wait(ctx, seen); err != nil {
		return store.TablePage{}, err
	}
	return page, nil
}

func readTables(it *pebble.Iterator, prefix []byte, q store.TableQuery) (store.TablePage, error) {
	var page store.TablePage
	top := store.PageSize(q.Top)
	if q.After == "" {
		it.First()
	} else {
		// Strictly after q.After: past every key whose name is q.After.
		it.SeekGE(componentPast(appendComponent(bytes.Clone(prefix), q.After)))
	}
	for ; it.Valid(); it.Next() {
		name, _, err := readComponent(it.Key()[len(prefix):])
		if err != nil {
			return store.TablePage{}, err
		}
		info, err := record.DecodeTableInfo(string(it.Value()))
		if err != nil {
			return store.TablePage{}, fmt.Errorf("pebblestore: table %q: %w", name, err)
		}
		if q.Match != nil && !q.Match(info) {
			continue
		}
		page.Tables = append(page.Tables, info)
		if len(page.Tables) == top {
			last := string(name)
			if it.Next() {
				page.Next = last
			}
			return page, nil
		}
	}
	return page, it.Error()
}

// SetTableACL replaces the table's stored access policies.
func (s *Store) SetTableACL(ctx context.Context, account, table string, acl []model.SignedIdentifier) (err error) {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave(&err)
	return s.commit(ctx, func() (*pebble.Batch, error) {
		info, err := s.tableInfo(account, table)
		if err != nil {
			return nil, err
		}
		info.ACL = slices.Clone(acl)
		b := s.db.NewBatch()
		if err := b.Set(catalogKey(account, strings.ToLower(table)), record.EncodeTableInfo(info), nil); err != nil {
			b.Close()
			return nil, err
		}
		return b, nil
	}, nil)
}

// GetServiceProperties returns the account's document, or nil when unset.
func (s *Store) GetServiceProperties(ctx context.Context, account string) (doc []byte, err error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave(&err)
	if account == "" {
		return nil, nil
	}
	v, found, err := s.get(serviceKey(account))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: get service properties: %w", err)
	}
	if found {
		if doc, err = record.DecodeServiceProperties([]byte(v)); err != nil {
			return nil, fmt.Errorf("pebblestore: get service properties: %w", err)
		}
	}
	if err := s.sync.Wait(ctx, s.sync.appliedCount()); err != nil {
		return nil, err
	}
	return doc, nil
}

// SetServiceProperties stores the account's document.
func (s *Store) SetServiceProperties(ctx context.Context, account string, doc []byte) (err error) {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave(&err)
	if account == "" {
		return fmt.Errorf("pebblestore: set service properties: empty account name")
	}
	rec := record.EncodeServiceProperties(doc)
	return s.commit(ctx, func() (*pebble.Batch, error) {
		b := s.db.NewBatch()
		if err := b.Set(serviceKey(account), rec, nil); err != nil {
			b.Close()
			return nil, err
		}
		return b, nil
	}, nil)
}

// Accounts lists the accounts that have tables or service properties, in
// name order: what a copy of the whole store (tablebridge migrate between
// local stores) walks.
func (s *Store) Accounts(ctx context.Context) (accounts []string, err error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave(&err)
	for _, space := range []byte{spaceCatalog, spaceService} {
		it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{space}, UpperBound: []byte{space + 1}})
		if err != nil {
			return nil, fmt.Errorf("pebblestore: list accounts: %w", err)
		}
		for valid := it.First(); valid; {
			name, _, err := readComponent(it.Key()[1:])
			if err != nil {
				it.Close()
				return nil, err
			}
			if !slices.Contains(accounts, string(name)) {
				accounts = append(accounts, string(name))
			}
			// Past the account's other keys.
			valid = it.SeekGE(componentPast(appendComponent([]byte{space}, string(name))))
		}
		if err := it.Close(); err != nil {
			return nil, fmt.Errorf("pebblestore: list accounts: %w", err)
		}
	}
	slices.Sort(accounts)
	// What the iterators read may include writes not yet on disk.
	if err := s.sync.Wait(ctx, s.sync.appliedCount()); err != nil {
		return nil, err
	}
	return accounts, nil
}
