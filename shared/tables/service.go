package tables

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/tablebridge/tablebridge/shared/apierr"
	"github.com/tablebridge/tablebridge/shared/model"
	"github.com/tablebridge/tablebridge/shared/store"
)

// Service implements the Table service operations over a store.
type Service struct {
	store store.Store
	clock *clock
}

// Options configure a Service.
type Options struct {
	// Now returns the current time; time.Now when nil.
	Now func() time.Time
}

// New returns a Service over st.
func New(st store.Store, opts Options) (*Service, error) {
	if st == nil {
		return nil, errors.New("tables: nil store")
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, clock: &clock{now: now}}, nil
}

// Scope is who calls, and which entities they may reach.
type Scope struct {
	Account string
	// EntityAllowed restricts the entities a shared access signature reaches
	// (its PartitionKey/RowKey range). Nil allows every entity.
	EntityAllowed func(partitionKey, rowKey string) bool
	// Keys, when set, bounds the keys EntityAllowed can allow, so a query
	// reads only that part of the table (it may be wider than
	// EntityAllowed; the exact check still runs per entity).
	Keys *model.KeyRange
}

func (sc Scope) allows(pk, rk string) bool {
	return sc.EntityAllowed == nil || sc.EntityAllowed(pk, rk)
}

// clock hands out entity Timestamps. They have 100 ns precision (the ETag
// carries 7 fractional digits) and strictly increase within a process, so
// two writes in the same tick still get different ETags.
type clock struct {
	now  func() time.Time
	mu   sync.Mutex
	last time.Time
}

const tick = 100 * time.Nanosecond

func (c *clock) next() time.Time {
	t := c.now().UTC().Truncate(tick)
	c.mu.Lock()
	if !t.After(c.last) {
		t = c.last.Add(tick)
	}
	c.last = t
	c.mu.Unlock()
	return t
}

// storeError maps a store sentinel to the Azure error for an operation.
// Unknown errors stay internal: they are never guessed to be a 404.
func storeError(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := apierr.As(err); ok {
		return err
	}
	code := apierr.InternalError
	switch {
	case errors.Is(err, store.ErrTableNotFound):
		code = apierr.TableNotFound
	case errors.Is(err, store.ErrTableExists):
		code = apierr.TableAlreadyExists
	case errors.Is(err, store.ErrTableBeingDeleted):
		code = apierr.TableBeingDeleted
	case errors.Is(err, store.ErrEntityExists):
		code = apierr.EntityAlreadyExists
	case errors.Is(err, store.ErrEntityNotFound):
		code = apierr.ResourceNotFound
	case errors.Is(err, store.ErrConditionFailed):
		code = apierr.UpdateConditionNotSatisfied
	case errors.Is(err, store.ErrEntityTooLarge):
		code = apierr.EntityTooLarge
	case errors.Is(err, store.ErrTooManyProperties):
		code = apierr.TooManyProperties
	case errors.Is(err, store.ErrKeyTooLong):
		return &apierr.Error{Code: apierr.OutOfRangeInput, Err: err,
			Detail: "The key is longer than this deployment's storage can index (DynamoDB: 2048 bytes of UTF-8 for PartitionKey, 1024 for RowKey)."}
	case errors.Is(err, store.ErrOutcomeUnknown):
		// 503 ServerBusy tells Azure clients the operation was not
		// performed; a write that may have been is Azure's 500
		// OperationTimedOut.
		return &apierr.Error{Code: apierr.RequestTimeout, Err: err,
			Detail: "The storage backend did not confirm the write: it may or may not have been applied."}
	case errors.Is(err, store.ErrBusy):
		code = apierr.ServerBusy
	case errors.Is(err, store.ErrUnavailable), errors.Is(err, context.DeadlineExceeded):
		return &apierr.Error{Code: apierr.ServerBusy, Err: err,
			Message: "The storage backend did not answer in time. Please retry your request."}
	case errors.Is(err, context.Canceled):
		return &apierr.Error{Code: apierr.InternalError, Err: err, Message: "The request was cancelled."}
	}
	return &apierr.Error{Code: code, Err: err}
}
