package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
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
	// Describe names the destination for logs and the checkpoint, without
	// credentials.
	Describe() string
}

// StoreIO reads from and writes to a store.Store directly, without HTTP:
// the bolt file of tablebridge serve, or the DynamoDB tables of a deployed
// tablebridge. It validates every entity with shared/model as the service
// would, and assigns Timestamps with its clock, as the service would.
type StoreIO struct {
	st      store.Store
	account string
	desc    string
	mu      sync.Mutex
	clock   clock
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
	if now == nil {
		now = time.Now
	}
	return &StoreIO{st: st, account: account, desc: desc, clock: clock{now: now}}, nil
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
	if page.Next != nil {
		out.Next = &Continuation{NextPartitionKey: page.Next.PartitionKey, NextRowKey: page.Next.RowKey}
	}
	return out, nil
}

// EnsureTable creates the table; one that exists already is fine.
func (s *StoreIO) EnsureTable(ctx context.Context, table string) error {
	if err := model.ValidateTableName(table); err != nil {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	_, err := s.st.CreateTable(ctx, s.account, table)
	if err != nil && !errors.Is(err, store.ErrTableExists) {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	return nil
}

// maxStoreWriteBytes bounds one Write by model.EntitySize, so a batch of
// near-1 MiB entities stays inside DynamoDB's 4 MB transaction limit as it
// would inside Azure's 4 MiB.
const maxStoreWriteBytes = 2 << 20

// Upsert writes entities with OpReplace and no condition (Insert Or
// Replace), in atomic Writes of at most 100 entities and about 2 MiB, each
// with one new Timestamp, as Azure gives a whole transaction one.
func (s *StoreIO) Upsert(ctx context.Context, table string, entities []*model.Entity) error {
	ops := make([]store.Op, 0, min(len(entities), MaxBatch))
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		s.mu.Lock()
		ts := s.clock.next()
		s.mu.Unlock()
		for i := range ops {
			ops[i].Entity.Timestamp = ts
		}
		err := s.st.Write(ctx, s.account, table, ops)
		if err != nil {
			var oe *store.OpError
			if errors.As(err, &oe) && oe.Index >= 0 && oe.Index < len(ops) {
				e := ops[oe.Index].Entity
				err = fmt.Errorf("write %s (PartitionKey %q, RowKey %q): %w", table, e.PartitionKey, e.RowKey, err)
			} else {
				err = fmt.Errorf("write %s: %w", table, err)
			}
		}
		ops, size = ops[:0], 0
		return err
	}
	for _, e := range entities {
		if err := model.ValidateEntity(e); err != nil {
			return fmt.Errorf("entity (PartitionKey %q, RowKey %q) of %s: %w", e.PartitionKey, e.RowKey, table, err)
		}
		n := model.EntitySize(e)
		if len(ops) == MaxBatch || (len(ops) > 0 && size+n > maxStoreWriteBytes) {
			if err := flush(); err != nil {
				return err
			}
		}
		// The store keeps the entity it is given; a copy leaves the
		// caller's Timestamp alone.
		c := *e
		ops = append(ops, store.Op{Kind: store.OpReplace, Cond: store.CondNone, Entity: &c})
		size += n
	}
	return flush()
}
