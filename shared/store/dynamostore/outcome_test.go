package dynamostore

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"syscall"
	"testing"

	awsmiddle "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

// attemptFault scripts the attempts of the first call of one operation, in
// front of DynamoDB Local, as AWS can answer them (SECURITY.md, "What a
// failed write means"):
//
//	lose        DynamoDB applies the attempt; its answer is lost (reset)
//	throttle    DynamoDB throttles the attempt, which is not applied
//	inProgress  TransactionInProgressException: the ClientRequestToken's
//	            first attempt is still running (not applied again)
//
// Attempts beyond the script, and later calls, pass untouched.
type attemptFault struct {
	op      string
	script  []string
	attempt atomic.Int32
	applied atomic.Int32
}

func (f *attemptFault) option(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("attemptFault",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
				if awsmiddle.GetOperationName(ctx) != f.op {
					return next.HandleDeserialize(ctx, in)
				}
				n := int(f.attempt.Add(1))
				if n > len(f.script) {
					return next.HandleDeserialize(ctx, in)
				}
				switch f.script[n-1] {
				case "lose":
					out, md, err := next.HandleDeserialize(ctx, in)
					if err != nil {
						return out, md, err
					}
					f.applied.Add(1)
					return middleware.DeserializeOutput{}, md, &smithyhttp.RequestSendError{Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}
				case "throttle":
					return middleware.DeserializeOutput{}, middleware.Metadata{}, &types.ThrottlingException{Message: new("Throughput exceeds the current capacity for one or more global secondary indexes")}
				case "inProgress":
					return middleware.DeserializeOutput{}, middleware.Metadata{}, &types.TransactionInProgressException{Message: new("Transaction is in progress")}
				}
				return next.HandleDeserialize(ctx, in)
			}), middleware.After)
	})
}

// TestWriteOutcomeUnknown: once an attempt of a write may have reached
// DynamoDB, the answer is ErrOutcomeUnknown (500 OperationTimedOut) whatever
// the later attempts answered: throttled retries, or a retry that finds the
// first transaction still in progress. 503 (ErrBusy) stays for writes that
// surely were not applied. Both layouts.
func TestWriteOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for _, layout := range layouts {
		t.Run(layout.name, func(t *testing.T) {
			base := newTestStore(t)
			env := layout.newEnv(t, base)
			cases := []struct {
				name   string
				op     string
				script []string
				batch  bool
				want   error
				stored bool
			}{
				{"BatchLostThenThrottled", "TransactWriteItems", []string{"lose", "throttle", "throttle", "throttle"}, true, store.ErrOutcomeUnknown, true},
				{"BatchLostThenInProgress", "TransactWriteItems", []string{"lose", "inProgress", "inProgress", "inProgress"}, true, store.ErrOutcomeUnknown, true},
				{"BatchThrottled", "TransactWriteItems", []string{"throttle", "throttle", "throttle", "throttle"}, true, store.ErrBusy, false},
				// The token makes a retry after a lost answer return the
				// first attempt's success.
				{"BatchLostThenRetried", "TransactWriteItems", []string{"lose"}, true, nil, true},
				{"SingleThrottledThenLost", "PutItem", []string{"throttle", "lose"}, false, store.ErrOutcomeUnknown, true},
				{"SingleThrottled", "PutItem", []string{"throttle", "throttle", "throttle", "throttle"}, false, store.ErrBusy, false},
			}
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					f := &attemptFault{op: c.op, script: c.script}
					s := sibling(t, base, f.option)
					ops := []store.Op{{Kind: store.OpInsert, Entity: newEntity(c.name, "a", nil)}}
					if c.batch {
						ops = append(ops, store.Op{Kind: store.OpInsert, Entity: newEntity(c.name, "b", nil)})
					}
					err := s.Write(env.ctx, env.account, env.table, ops)
					if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
						t.Fatalf("Write = %v; want %v", err, c.want)
					}
					_, gerr := base.GetEntity(env.ctx, env.account, env.table, c.name, "a")
					if stored := gerr == nil; stored != c.stored {
						t.Errorf("stored = %t (%v); want %t", stored, gerr, c.stored)
					}
				})
			}
		})
	}
}

// TestCatalogWriteOutcomeUnknown: the catalog's transactions follow the
// same rule. Delete Table on the shared layout is one TransactWriteItems;
// its answer lost and its retries throttled, the table is gone and the
// answer is ErrOutcomeUnknown, not 503.
func TestCatalogWriteOutcomeUnknown(t *testing.T) {
	t.Parallel()
	base := newTestStore(t)
	ctx := dynamolocal.Context(t, testTimeout)
	for _, c := range []struct {
		name   string
		script []string
		want   error
		gone   bool
	}{
		{"LostThenThrottled", []string{"lose", "throttle", "throttle", "throttle"}, store.ErrOutcomeUnknown, true},
		{"LostThenInProgress", []string{"lose", "inProgress", "inProgress", "inProgress"}, store.ErrOutcomeUnknown, true},
		{"Throttled", []string{"throttle", "throttle", "throttle", "throttle"}, store.ErrBusy, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := base.CreateTable(ctx, "acct", c.name); err != nil {
				t.Fatal(err)
			}
			f := &attemptFault{op: "TransactWriteItems", script: c.script}
			s := sibling(t, base, f.option)
			if err := s.DeleteTable(ctx, "acct", c.name); !errors.Is(err, c.want) {
				t.Fatalf("DeleteTable = %v; want %v", err, c.want)
			}
			_, gerr := base.GetTable(ctx, "acct", c.name)
			if gone := errors.Is(gerr, store.ErrTableNotFound); gone != c.gone {
				t.Errorf("table gone = %t (%v); want %t", gone, gerr, c.gone)
			}
		})
	}
}
