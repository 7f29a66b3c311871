package migrate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/operation"
	"github.com/tablebridge/tablebridge/shared/store"
	"github.com/tablebridge/tablebridge/shared/tables"
)

// Dest is where entities go.
type Dest interface {
	// EnsureTable creates the table if it does not exist.
	EnsureTable(ctx context.Context, table string) error
	// Upsert writes entities of one partition as Insert Or Replace: each
	// ends up stored exactly as given, whatever was there, so a replay
	// after an interruption changes nothing. The destination assigns
	// Timestamps. It may split the entities into several transactions of
	// its size; a nil error means all of them are stored.
	Upsert(ctx context.Context, table string, entities []*model.Entity) error
	// Delete deletes one entity whatever its version; one that is already
	// gone is fine. A follow uses it for entities deleted from the source.
	Delete(ctx context.Context, table, partitionKey, rowKey string) error
	// Describe names the destination for logs and the checkpoint, without
	// credentials.
	Describe() string
}

// StoreIO reads from and writes to a store.Store directly, without HTTP:
// the bolt file of tablebridge serve, or the DynamoDB tables of a deployed
// tablebridge. It writes through the Table service (shared/tables), which
// validates every entity and assigns Timestamps as for any request, and
// reads the store directly, which takes a key range to split a table by.
type StoreIO struct {
	// KeepTimestamps has Upsert store each entity with its own Timestamp
	// (tables.Service.RestoreEntities) instead of a new one: for a copy
	// from one tablebridge store into another, where the Timestamps (the
	// clients' ETags) are part of the data.
	KeepTimestamps bool

	st      store.Store
	svc     *tables.Service
	scope   tables.Scope
	account string
	desc    string
}

var (
	_ Source = (*StoreIO)(nil)
	_ Dest   = (*StoreIO)(nil)
)

// NewStoreIO serves account's tables in st. desc names the store for the
// checkpoint (e.g. "bolt /data/tablebridge.db"). now is the clock of the
// Timestamps it assigns; nil means time.Now. The caller closes st.
func NewStoreIO(st store.Store, account, desc string, now func() time.Time) (*StoreIO, error) {
	if st == nil {
		return nil, errors.New("migrate: nil store")
	}
	if account == "" {
		return nil, errors.New("migrate: empty account name")
	}
	svc, err := tables.New(st, tables.Options{Now: now})
	if err != nil {
		return nil, err
	}
	return &StoreIO{st: st, svc: svc, scope: tables.Scope{Account: account}, account: account, desc: desc}, nil
}

// Describe names the store and account.
func (s *StoreIO) Describe() string { return s.desc + " account " + s.account }

// Tables lists the account's tables.
func (s *StoreIO) Tables(ctx context.Context) ([]string, error) {
	var names []string
	q := store.TableQuery{Top: MaxPageSize}
	for {
		page, err := s.st.QueryTables(ctx, s.account, q)
		if err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		for _, t := range page.Tables {
			names = append(names, t.Name)
		}
		if page.Next == "" {
			return names, nil
		}
		q.After = page.Next
	}
}

// SplitsRanges: the store takes a key range.
func (s *StoreIO) SplitsRanges() bool { return true }

// ReadPage queries one page; the continuation is the store's cursor.
func (s *StoreIO) ReadPage(ctx context.Context, table string, req PageRequest) (Page, error) {
	top := req.Top
	if top <= 0 || top > MaxPageSize {
		top = MaxPageSize
	}
	q := store.Query{Top: top, Keys: req.Range.KeyRange()}
	if !req.Range.Whole() {
		rng := req.Range
		q.Match = func(e *model.Entity) bool { return rng.Contains(e.PartitionKey) }
	}
	if req.After != nil {
		q.After = &store.Cursor{PartitionKey: req.After.NextPartitionKey, RowKey: req.After.NextRowKey}
	}
	page, err := s.st.QueryEntities(ctx, s.account, table, q)
	if err != nil {
		return Page{}, fmt.Errorf("query %s: %w", table, err)
	}
	out := Page{Entities: page.Entities}
	if !req.Since.IsZero() {
		// After the page, not in Match: the cursor then still moves past
		// what a page skipped.
		out.Entities = sinceOnly(out.Entities, req.Since)
	}
	if page.Next != nil {
		out.Next = &Continuation{NextPartitionKey: page.Next.PartitionKey, NextRowKey: page.Next.RowKey}
	}
	return out, nil
}

// EnsureTable creates the table; one that exists already is fine.
func (s *StoreIO) EnsureTable(ctx context.Context, table string) error {
	_, err := s.svc.CreateTable(ctx, s.scope, table)
	if ae, ok := apierr.As(err); ok && ae.Code == apierr.TableAlreadyExists {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	return nil
}

// Delete deletes one entity through the service with If-Match: *; one that
// is already gone is fine.
func (s *StoreIO) Delete(ctx context.Context, table, partitionKey, rowKey string) error {
	_, err := s.svc.WriteEntity(ctx, s.scope, table, tables.EntityWrite{Op: operation.DeleteEntity,
		PartitionKey: partitionKey, RowKey: rowKey, IfMatch: "*"})
	if ae, ok := apierr.As(err); ok && ae.Code == apierr.ResourceNotFound {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete from %s: %w", table, err)
	}
	return nil
}

// maxStoreWriteBytes bounds one Write by model.EntitySize, so a batch of
// near-1 MiB entities stays inside DynamoDB's 4 MB transaction limit as it
// would inside Azure's 4 MiB.
const maxStoreWriteBytes = 2 << 20

// Upsert writes entities as Insert Or Replace transactions
// (tables.ReplaceEntities) of at most 100 entities and about 2 MiB, each
// with one new Timestamp, as Azure gives a whole transaction one.
func (s *StoreIO) Upsert(ctx context.Context, table string, entities []*model.Entity) error {
	for len(entities) > 0 {
		n, size := 0, 0
		for n < len(entities) && n < MaxBatch {
			es := model.EntitySize(entities[n])
			if n > 0 && size+es > maxStoreWriteBytes {
				break
			}
			size += es
			n++
		}
		write := s.svc.ReplaceEntities
		if s.KeepTimestamps {
			write = s.svc.RestoreEntities
		}
		if err := write(ctx, s.scope, table, entities[:n]); err != nil {
			var be *tables.BatchError
			if errors.As(err, &be) && be.Index >= 0 && be.Index < n {
				e := entities[be.Index]
				return fmt.Errorf("write %s (PartitionKey %q, RowKey %q): %w", table, e.PartitionKey, e.RowKey, be.Err)
			}
			return fmt.Errorf("write %s: %w", table, err)
		}
		entities = entities[n:]
	}
	return nil
}
