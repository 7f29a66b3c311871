package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablebridge/tablebridge/shared/model"
)

// Sentinel errors. Stores wrap them (fmt.Errorf("...: %w", ErrX)) and callers
// test with errors.Is.
var (
	ErrTableExists       = errors.New("store: table already exists")
	ErrTableNotFound     = errors.New("store: table not found")
	ErrTableBeingDeleted = errors.New("store: table is being deleted")
	ErrEntityExists      = errors.New("store: entity already exists")
	ErrEntityNotFound    = errors.New("store: entity not found")
	// ErrConditionFailed: the entity exists but its Timestamp differs from
	// the If-Match condition.
	ErrConditionFailed = errors.New("store: condition failed")
	// ErrEntityTooLarge and ErrTooManyProperties: the result of a merge
	// breaks the data model's limits (model.ValidateEntity).
	ErrEntityTooLarge    = errors.New("store: entity too large")
	ErrTooManyProperties = errors.New("store: too many properties")
	// ErrKeyTooLong: a key is legal in Azure but longer than this backend
	// can index (DynamoDB's key byte limits).
	ErrKeyTooLong = errors.New("store: key too long for this store")
	// ErrBusy: the backend throttled the request; the client should retry.
	ErrBusy = errors.New("store: busy")
	// ErrUnavailable: the backend could not be reached in time; nothing
	// was applied.
	ErrUnavailable = errors.New("store: unavailable")
	// ErrOutcomeUnknown: a write went out but its answer did not come back
	// (a timeout or a broken connection after sending). It may or may not
	// have been applied; the client must read to know.
	ErrOutcomeUnknown = errors.New("store: outcome of the write unknown")
	// ErrInvalidOp: an op no store can apply (Op.Check), a caller's bug
	// rather than anything a client sent.
	ErrInvalidOp = errors.New("store: invalid op")
)

// OpError locates a failed operation within a Write.
type OpError struct {
	Index int // 0-based index into the ops slice
	Err   error
}

func (e *OpError) Error() string { return fmt.Sprintf("op %d: %v", e.Index, e.Err) }
func (e *OpError) Unwrap() error { return e.Err }

// OpKind says what a write does.
type OpKind uint8

const (
	// OpInsert adds an entity that must not exist.
	OpInsert OpKind = iota + 1
	// OpReplace stores the entity in place of the existing one.
	OpReplace
	// OpMerge adds or overwrites properties of the existing entity and keeps
	// the others.
	OpMerge
	// OpDelete removes the entity.
	OpDelete
)

func (k OpKind) String() string {
	switch k {
	case OpInsert:
		return "insert"
	case OpReplace:
		return "replace"
	case OpMerge:
		return "merge"
	case OpDelete:
		return "delete"
	}
	return fmt.Sprintf("OpKind(%d)", uint8(k))
}

// CondKind is the If-Match precondition of a Replace, Merge or Delete.
// Insert ignores it: an insert always requires absence.
type CondKind uint8

const (
	// CondNone: no If-Match. Replace and Merge then upsert (Insert Or
	// Replace, Insert Or Merge); Delete then requires existence only.
	CondNone CondKind = iota
	// CondExists: If-Match: *. The entity must exist.
	CondExists
	// CondTimestamp: If-Match with an ETag. The entity must exist with
	// exactly this Timestamp.
	CondTimestamp
)

// Op is one entity write. Entity always carries the keys. For Insert,
// Replace and Merge it carries the new Timestamp, which the service assigned,
// and the properties. For Delete only the keys matter.
type Op struct {
	Kind      OpKind
	Entity    *model.Entity
	Cond      CondKind
	Timestamp time.Time // with CondTimestamp
}

// Check reports ErrInvalidOp for an op without an entity, or of an
// unknown kind or condition. Every store checks each op of a Write with it
// before applying any.
func (op Op) Check() error {
	if op.Entity == nil {
		return fmt.Errorf("%w: %s without an entity", ErrInvalidOp, op.Kind)
	}
	switch op.Kind {
	case OpInsert, OpReplace, OpMerge, OpDelete:
	default:
		return fmt.Errorf("%w: unknown op kind %s", ErrInvalidOp, op.Kind)
	}
	switch op.Cond {
	case CondNone, CondExists, CondTimestamp:
	default:
		return fmt.Errorf("%w: unknown condition %d", ErrInvalidOp, op.Cond)
	}
	return nil
}

// TableInfo describes one table.
type TableInfo struct {
	// Name keeps the case the table was created with. Lookups are
	// case-insensitive.
	Name string
	ACL  []model.SignedIdentifier
}

// Cursor is a position in a store's key order: a query resumes strictly
// after it. For entities it is the (PartitionKey, RowKey) of the last entity
// the store examined, matched or not.
type Cursor struct {
	PartitionKey string
	RowKey       string
}

// Query selects entities of one table.
type Query struct {
	// Keys narrows the scan. It is a hint implied by Match: a store may use it
	// to read less but must still apply Match.
	Keys model.KeyRange
	// Match is the exact predicate; nil matches every entity.
	Match func(*model.Entity) bool
	// Top is the most matching entities to return, 1 to 1000.
	Top int
	// After resumes a previous page. Nil starts at the beginning.
	After *Cursor
}

// Page is one page of a query. Next is nil when no entity remains. A page may
// hold fewer than Top entities, even none, and still have a Next: a store may
// stop early on a time or size budget, as Azure does.
type Page struct {
	Entities []*model.Entity
	Next     *Cursor
	// ItemsRead is how many stored items the store read for the page, the
	// measure of its cost that the request log carries.
	ItemsRead int
}

// TableQuery selects tables of one account in case-insensitive name order.
type TableQuery struct {
	Match func(TableInfo) bool // nil matches every table
	Top   int                  // 1 to 1000
	// After resumes strictly after this lower-cased table name.
	After string
}

// TablePage is one page of tables. Next is "" when no table remains;
// otherwise pass it back as TableQuery.After.
type TablePage struct {
	Tables []TableInfo
	Next   string
}

// Store is the storage contract. Every method is safe for concurrent use.
// Table names are matched case-insensitively; account names exactly.
type Store interface {
	// CreateTable creates a table. ErrTableExists if a table of the same
	// name in any case exists; ErrTableBeingDeleted while a deleted table of
	// that name still winds down.
	CreateTable(ctx context.Context, account, table string) (TableInfo, error)
	// DeleteTable deletes a table and all its entities. ErrTableNotFound.
	DeleteTable(ctx context.Context, account, table string) error
	// GetTable returns the table's info, ACL included. ErrTableNotFound.
	GetTable(ctx context.Context, account, table string) (TableInfo, error)
	// QueryTables lists tables.
	QueryTables(ctx context.Context, account string, q TableQuery) (TablePage, error)
	// SetTableACL replaces the table's stored access policies.
	SetTableACL(ctx context.Context, account, table string, acl []model.SignedIdentifier) error

	// GetEntity returns one entity. ErrTableNotFound, ErrEntityNotFound.
	GetEntity(ctx context.Context, account, table, partitionKey, rowKey string) (*model.Entity, error)
	// QueryEntities returns one page of a query. ErrTableNotFound.
	QueryEntities(ctx context.Context, account, table string, q Query) (Page, error)
	// Write applies ops atomically: all of them or none, even across a
	// crash, and no reader sees a part. A failure is an *OpError naming the
	// first op that failed, wrapping ErrEntityExists, ErrEntityNotFound,
	// ErrConditionFailed, ErrEntityTooLarge, ErrTooManyProperties or
	// ErrKeyTooLong; ErrTableNotFound may come bare. Ops of one call name
	// distinct entities.
	//
	// Timestamps only increase: when the Timestamp of a Replace or Merge
	// is not after the version it replaces (the stored one, or the one its
	// If-Match names), as happens when processes' clocks differ, Write
	// moves it just past that version (by 100 ns) and sets it in
	// op.Entity.Timestamp, which on success is always the Timestamp
	// stored. Callers build the ETag from it.
	Write(ctx context.Context, account, table string, ops []Op) error

	// GetServiceProperties returns the account's stored service properties
	// document, or nil when none was set.
	GetServiceProperties(ctx context.Context, account string) ([]byte, error)
	// SetServiceProperties stores the account's service properties document.
	SetServiceProperties(ctx context.Context, account string, doc []byte) error

	// Close releases the store.
	Close() error
}
