package boltstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/store/record"
)

// tableKey is the catalog and bucket key of a table: Azure table names are
// case-insensitive (and ASCII letters and digits only).
func tableKey(table string) []byte { return []byte(strings.ToLower(table)) }

// CreateTable creates the table, keeping the case of its name.
func (s *Store) CreateTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	if err := s.enter(ctx); err != nil {
		return store.TableInfo{}, err
	}
	defer s.leave()
	if account == "" || table == "" {
		return store.TableInfo{}, fmt.Errorf("boltstore: create table: empty account or table name")
	}
	info := store.TableInfo{Name: table}
	err := s.update(func(tx *bolt.Tx) error {
		acct, err := tx.Bucket(bucketAccounts).CreateBucketIfNotExists([]byte(account))
		if err != nil {
			return err
		}
		catalog, err := acct.CreateBucketIfNotExists(bucketCatalog)
		if err != nil {
			return err
		}
		tables, err := acct.CreateBucketIfNotExists(bucketTables)
		if err != nil {
			return err
		}
		key := tableKey(table)
		if catalog.Get(key) != nil {
			return fmt.Errorf("%q: %w", table, store.ErrTableExists)
		}
		if err := catalog.Put(key, record.EncodeTableInfo(info)); err != nil {
			return err
		}
		// A leftover bucket without a catalog entry cannot exist, since
		// both change in one transaction; drop one anyway rather than
		// resurrect old entities.
		if tables.Bucket(key) != nil {
			if err := tables.DeleteBucket(key); err != nil {
				return err
			}
		}
		_, err = tables.CreateBucket(key)
		return err
	})
	if err != nil {
		return store.TableInfo{}, wrapErr("create table", err)
	}
	return info, nil
}

// DeleteTable removes the table's catalog entry and drops its entities.
func (s *Store) DeleteTable(ctx context.Context, account, table string) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	err := s.update(func(tx *bolt.Tx) error {
		catalog, tables := catalogBuckets(tx, account)
		key := tableKey(table)
		if catalog == nil || table == "" || catalog.Get(key) == nil {
			return fmt.Errorf("%q: %w", table, store.ErrTableNotFound)
		}
		if err := catalog.Delete(key); err != nil {
			return err
		}
		if err := tables.DeleteBucket(key); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		return nil
	})
	return wrapErr("delete table", err)
}

// GetTable returns the table's info with its ACL.
func (s *Store) GetTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	if err := s.enter(ctx); err != nil {
		return store.TableInfo{}, err
	}
	defer s.leave()
	var info store.TableInfo
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		info, err = getTableInfo(tx, account, table)
		return err
	})
	if err != nil {
		return store.TableInfo{}, wrapErr("get table", err)
	}
	return info, nil
}

// QueryTables lists the account's tables in lower-cased name order.
func (s *Store) QueryTables(ctx context.Context, account string, q store.TableQuery) (store.TablePage, error) {
	if err := s.enter(ctx); err != nil {
		return store.TablePage{}, err
	}
	defer s.leave()
	top := store.PageSize(q.Top)
	var page store.TablePage
	err := s.view(ctx, func(tx *bolt.Tx) error {
		catalog, _ := catalogBuckets(tx, account)
		if catalog == nil {
			return nil
		}
		c := catalog.Cursor()
		var k, v []byte
		if q.After == "" {
			k, v = c.First()
		} else {
			// The smallest key after q.After is q.After + "\x00".
			k, v = c.Seek(append([]byte(q.After), 0))
		}
		for ; k != nil; k, v = c.Next() {
			info, err := record.DecodeTableInfo(string(v))
			if err != nil {
				return fmt.Errorf("table %q: %w", k, err)
			}
			if q.Match != nil && !q.Match(info) {
				continue
			}
			page.Tables = append(page.Tables, info)
			if len(page.Tables) == top {
				if next, _ := c.Next(); next != nil {
					page.Next = string(k)
				}
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return store.TablePage{}, wrapErr("query tables", err)
	}
	return page, nil
}

// SetTableACL replaces the table's stored access policies.
func (s *Store) SetTableACL(ctx context.Context, account, table string, acl []model.SignedIdentifier) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	err := s.update(func(tx *bolt.Tx) error {
		info, err := getTableInfo(tx, account, table)
		if err != nil {
			return err
		}
		info.ACL = slices.Clone(acl)
		catalog, _ := catalogBuckets(tx, account)
		return catalog.Put(tableKey(table), record.EncodeTableInfo(info))
	})
	return wrapErr("set table ACL", err)
}

// GetServiceProperties returns the account's document, or nil when unset.
func (s *Store) GetServiceProperties(ctx context.Context, account string) ([]byte, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	var doc []byte
	err := s.view(ctx, func(tx *bolt.Tx) error {
		acct := accountBucket(tx, account)
		if acct == nil {
			return nil
		}
		v := acct.Get(keyService)
		if v == nil {
			return nil
		}
		var err error
		doc, err = record.DecodeServiceProperties(v)
		return err
	})
	if err != nil {
		return nil, wrapErr("get service properties", err)
	}
	return doc, nil
}

// SetServiceProperties stores the account's document.
func (s *Store) SetServiceProperties(ctx context.Context, account string, doc []byte) error {
	if err := s.enter(ctx); err != nil {
		return err
	}
	defer s.leave()
	if account == "" {
		return fmt.Errorf("boltstore: set service properties: empty account name")
	}
	err := s.update(func(tx *bolt.Tx) error {
		acct, err := tx.Bucket(bucketAccounts).CreateBucketIfNotExists([]byte(account))
		if err != nil {
			return err
		}
		return acct.Put(keyService, record.EncodeServiceProperties(doc))
	})
	return wrapErr("set service properties", err)
}

// catalogBuckets returns the account's catalog and tables buckets, or nils
// when the account never had a table.
func catalogBuckets(tx *bolt.Tx, account string) (catalog, tables *bolt.Bucket) {
	acct := accountBucket(tx, account)
	if acct == nil {
		return nil, nil
	}
	catalog, tables = acct.Bucket(bucketCatalog), acct.Bucket(bucketTables)
	if catalog == nil || tables == nil {
		return nil, nil
	}
	return catalog, tables
}

func getTableInfo(tx *bolt.Tx, account, table string) (store.TableInfo, error) {
	catalog, _ := catalogBuckets(tx, account)
	if catalog == nil || table == "" {
		return store.TableInfo{}, fmt.Errorf("%q: %w", table, store.ErrTableNotFound)
	}
	v := catalog.Get(tableKey(table))
	if v == nil {
		return store.TableInfo{}, fmt.Errorf("%q: %w", table, store.ErrTableNotFound)
	}
	info, err := record.DecodeTableInfo(string(v))
	if err != nil {
		return store.TableInfo{}, fmt.Errorf("table %q: %w", table, err)
	}
	return info, nil
}

// wrapErr prefixes an operation name, keeping sentinels testable with
// errors.Is. nil stays nil.
func wrapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("boltstore: %s: %w", op, err)
}

// Accounts lists the accounts that have tables or service properties, in
// name order: what a copy of the whole store (tablebridge migrate between
// local stores) walks.
func (s *Store) Accounts(ctx context.Context) ([]string, error) {
	if err := s.enter(ctx); err != nil {
		return nil, err
	}
	defer s.leave()
	var accounts []string
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAccounts).ForEachBucket(func(name []byte) error {
			acct := tx.Bucket(bucketAccounts).Bucket(name)
			hasTables := false
			if catalog := acct.Bucket(bucketCatalog); catalog != nil {
				first, _ := catalog.Cursor().First()
				hasTables = first != nil
			}
			if hasTables || acct.Get(keyService) != nil {
				accounts = append(accounts, string(name))
			}
			return nil
		})
	})
	if err != nil {
		return nil, wrapErr("list accounts", err)
	}
	return accounts, nil
}
