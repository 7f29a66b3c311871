package memstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

var _ store.Store = (*Store)(nil)

// ErrClosed is returned by every method called after Close.
var ErrClosed = errors.New("memstore: store is closed")

// The scan budget of one query page, the bolt store's defaults: Azure ends
// a page after about five seconds, and a bounded page bounds the time the
// read lock is held.
const (
	defaultScanRows = 100_000
	defaultScanTime = 5 * time.Second
)

// Option configures New.
type Option func(*Store) error

// WithScanBudget bounds one query page: after examining maxRows entities or
// spending maxTime, QueryEntities returns what it has with a continuation.
func WithScanBudget(maxRows int, maxTime time.Duration) Option {
	return func(s *Store) error {
		if maxRows < 1 || maxTime <= 0 {
			return fmt.Errorf("memstore: invalid scan budget: %d rows, %v", maxRows, maxTime)
		}
		s.scanRows, s.scanTime = maxRows, maxTime
		return nil
	}
}

// Store is a store.Store in memory. It is safe for concurrent use.
type Store struct {
	scanRows int
	scanTime time.Duration

	mu       sync.RWMutex
	closed   bool
	accounts map[string]*account
	scratch  []byte // the buffer a write encodes its rows in, under mu
}

type account struct {
	tables  map[string]*table // by lower-cased name
	service []byte            // the service properties document, nil when unset
}

type table struct {
	info store.TableInfo
	rows rows
}

// New returns an empty store.
func New(opts ...Option) (*Store, error) {
	s := &Store{scanRows: defaultScanRows, scanTime: defaultScanTime, accounts: map[string]*account{}}
	for _, opt := range opts {
		if err := opt(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Close drops the data. Later calls return ErrClosed; closing twice is
// harmless.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed, s.accounts = true, nil
	return nil
}

// lock takes the store's lock, shared or exclusive, unless the store is
// closed or ctx is done; the caller unlocks when it returns nil.
func (s *Store) lock(ctx context.Context, exclusive bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if exclusive {
		s.mu.Lock()
	} else {
		s.mu.RLock()
	}
	if s.closed {
		s.unlock(exclusive)
		return ErrClosed
	}
	return nil
}

func (s *Store) unlock(exclusive bool) {
	if exclusive {
		s.mu.Unlock()
	} else {
		s.mu.RUnlock()
	}
}

// table returns the table, or ErrTableNotFound. The caller holds the lock.
func (s *Store) table(account, name string) (*table, error) {
	if a := s.accounts[account]; a != nil {
		if t := a.tables[strings.ToLower(name)]; t != nil {
			return t, nil
		}
	}
	return nil, fmt.Errorf("memstore: %q: %w", name, store.ErrTableNotFound)
}

// CreateTable creates the table, keeping the case of its name.
func (s *Store) CreateTable(ctx context.Context, accountName, name string) (store.TableInfo, error) {
	if accountName == "" || name == "" {
		return store.TableInfo{}, fmt.Errorf("memstore: create table: empty account or table name")
	}
	if err := s.lock(ctx, true); err != nil {
		return store.TableInfo{}, err
	}
	defer s.unlock(true)
	a := s.accounts[accountName]
	if a == nil {
		a = &account{tables: map[string]*table{}}
		s.accounts[accountName] = a
	}
	k := strings.ToLower(name)
	if a.tables[k] != nil {
		return store.TableInfo{}, fmt.Errorf("memstore: %q: %w", name, store.ErrTableExists)
	}
	a.tables[k] = &table{info: store.TableInfo{Name: name}}
	return store.TableInfo{Name: name}, nil
}

// DeleteTable drops the table and its entities at once: unlike DynamoDB
// there is nothing to wind down, so ErrTableBeingDeleted never comes.
func (s *Store) DeleteTable(ctx context.Context, accountName, name string) error {
	if err := s.lock(ctx, true); err != nil {
		return err
	}
	defer s.unlock(true)
	if _, err := s.table(accountName, name); err != nil {
		return err
	}
	delete(s.accounts[accountName].tables, strings.ToLower(name))
	return nil
}

// GetTable returns the table's info with a copy of its ACL.
func (s *Store) GetTable(ctx context.Context, accountName, name string) (store.TableInfo, error) {
	if err := s.lock(ctx, false); err != nil {
		return store.TableInfo{}, err
	}
	defer s.unlock(false)
	t, err := s.table(accountName, name)
	if err != nil {
		return store.TableInfo{}, err
	}
	return cloneInfo(t.info), nil
}

// QueryTables lists the account's tables in lower-cased name order. An
// account holds few tables, so sorting their names per page costs little.
func (s *Store) QueryTables(ctx context.Context, accountName string, q store.TableQuery) (store.TablePage, error) {
	if err := s.lock(ctx, false); err != nil {
		return store.TablePage{}, err
	}
	defer s.unlock(false)
	var page store.TablePage
	a := s.accounts[accountName]
	if a == nil {
		return page, nil
	}
	names := make([]string, 0, len(a.tables))
	for k := range a.tables {
		if k > q.After {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	top := store.PageSize(q.Top)
	for i, k := range names {
		info := a.tables[k].info
		if q.Match != nil && !q.Match(info) {
			continue
		}
		page.Tables = append(page.Tables, cloneInfo(info))
		if len(page.Tables) == top {
			if i+1 < len(names) {
				page.Next = k
			}
			break
		}
	}
	return page, nil
}

// SetTableACL replaces the table's stored access policies.
func (s *Store) SetTableACL(ctx context.Context, accountName, name string, acl []model.SignedIdentifier) error {
	if err := s.lock(ctx, true); err != nil {
		return err
	}
	defer s.unlock(true)
	t, err := s.table(accountName, name)
	if err != nil {
		return err
	}
	t.info.ACL = slices.Clone(acl)
	return nil
}

// GetServiceProperties returns a copy of the account's document, or nil
// when unset.
func (s *Store) GetServiceProperties(ctx context.Context, accountName string) ([]byte, error) {
	if err := s.lock(ctx, false); err != nil {
		return nil, err
	}
	defer s.unlock(false)
	if a := s.accounts[accountName]; a != nil {
		return bytes.Clone(a.service), nil
	}
	return nil, nil
}

// SetServiceProperties stores a copy of the account's document.
func (s *Store) SetServiceProperties(ctx context.Context, accountName string, doc []byte) error {
	if accountName == "" {
		return fmt.Errorf("memstore: set service properties: empty account name")
	}
	if err := s.lock(ctx, true); err != nil {
		return err
	}
	defer s.unlock(true)
	a := s.accounts[accountName]
	if a == nil {
		a = &account{tables: map[string]*table{}}
		s.accounts[accountName] = a
	}
	// A set empty document stays distinguishable from none.
	a.service = append([]byte{}, doc...)
	return nil
}

func cloneInfo(info store.TableInfo) store.TableInfo {
	info.ACL = slices.Clone(info.ACL)
	return info
}
