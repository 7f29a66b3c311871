package timedstore

import (
	"context"
	"errors"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Outcome classifies how a store call ended. Busy and Unavailable are the
// backend's own trouble (a DynamoDB throttle, an unreachable endpoint);
// Failed is any other error, most of them the protocol's ordinary answers
// (not found, exists, condition failed).
type Outcome string

// The outcomes.
const (
	OK          Outcome = "ok"
	Busy        Outcome = "busy"
	Unavailable Outcome = "unavailable"
	Failed      Outcome = "failed"
)

// outcome classifies err.
func outcome(err error) Outcome {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, store.ErrBusy):
		return Busy
	case errors.Is(err, store.ErrUnavailable):
		return Unavailable
	}
	return Failed
}

// Observer receives one call's method, duration and outcome. It must be
// safe for concurrent use.
type Observer func(method operation.StoreMethod, took time.Duration, outcome Outcome)

// Store times the calls of the store it wraps.
type Store struct {
	next    store.Store
	observe Observer
}

var _ store.Store = (*Store)(nil)

// New wraps next; observe receives every call but Close.
func New(next store.Store, observe Observer) *Store {
	return &Store{next: next, observe: observe}
}

func (s *Store) done(m operation.StoreMethod, start time.Time, err error) {
	s.observe(m, time.Since(start), outcome(err))
}

func (s *Store) CreateTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	start := time.Now()
	info, err := s.next.CreateTable(ctx, account, table)
	s.done(operation.StoreCreateTable, start, err)
	return info, err
}

func (s *Store) DeleteTable(ctx context.Context, account, table string) error {
	start := time.Now()
	err := s.next.DeleteTable(ctx, account, table)
	s.done(operation.StoreDeleteTable, start, err)
	return err
}

func (s *Store) GetTable(ctx context.Context, account, table string) (store.TableInfo, error) {
	start := time.Now()
	info, err := s.next.GetTable(ctx, account, table)
	s.done(operation.StoreGetTable, start, err)
	return info, err
}

func (s *Store) QueryTables(ctx context.Context, account string, q store.TableQuery) (store.TablePage, error) {
	start := time.Now()
	page, err := s.next.QueryTables(ctx, account, q)
	s.done(operation.StoreQueryTables, start, err)
	return page, err
}

func (s *Store) SetTableACL(ctx context.Context, account, table string, acl []model.SignedIdentifier) error {
	start := time.Now()
	err := s.next.SetTableACL(ctx, account, table, acl)
	s.done(operation.StoreSetTableACL, start, err)
	return err
}

func (s *Store) GetEntity(ctx context.Context, account, table, partitionKey, rowKey string) (*model.Entity, error) {
	start := time.Now()
	e, err := s.next.GetEntity(ctx, account, table, partitionKey, rowKey)
	s.done(operation.StoreGetEntity, start, err)
	return e, err
}

func (s *Store) QueryEntities(ctx context.Context, account, table string, q store.Query) (store.Page, error) {
	start := time.Now()
	page, err := s.next.QueryEntities(ctx, account, table, q)
	s.done(operation.StoreQueryEntities, start, err)
	return page, err
}

func (s *Store) Write(ctx context.Context, account, table string, ops []store.Op) error {
	start := time.Now()
	err := s.next.Write(ctx, account, table, ops)
	s.done(operation.StoreWrite, start, err)
	return err
}

func (s *Store) GetServiceProperties(ctx context.Context, account string) ([]byte, error) {
	start := time.Now()
	doc, err := s.next.GetServiceProperties(ctx, account)
	s.done(operation.StoreGetServiceProperties, start, err)
	return doc, err
}

func (s *Store) SetServiceProperties(ctx context.Context, account string, doc []byte) error {
	start := time.Now()
	err := s.next.SetServiceProperties(ctx, account, doc)
	s.done(operation.StoreSetServiceProperties, start, err)
	return err
}

// Close closes the wrapped store; it is not timed.
func (s *Store) Close() error { return s.next.Close() }
