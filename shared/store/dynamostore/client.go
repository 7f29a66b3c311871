package dynamostore

import (
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Retry settings for the DynamoDB client (see Configure).
const (
	retryMaxAttempts = 4
	retryMaxBackoff  = 1 * time.Second
)

// Configure sets the retry behaviour the store is designed for on DynamoDB
// client options; pass it to dynamodb.NewFromConfig:
//
//	client := dynamodb.NewFromConfig(cfg, dynamostore.Configure)
//
// The SDK's standard retryer backs off up to 20 s and keeps a client-side
// retry quota that, once drained by a burst of throttles, fails requests
// without sending them. Behind API Gateway's 29 s limit a short, bounded
// retry is better: a few attempts at most 1 s apart, no client-side quota,
// and whatever is still throttled becomes store.ErrBusy (503 ServerBusy),
// which the Azure SDKs retry on their own.
func Configure(o *dynamodb.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.MaxAttempts = retryMaxAttempts
		so.MaxBackoff = retryMaxBackoff
		so.RateLimiter = ratelimit.None
	})
	o.RetryMaxAttempts = 0 // Retryer decides
	o.RetryMode = aws.RetryModeStandard
}

// singleWriteRetryer retries a PutItem, UpdateItem or DeleteItem only when
// it was surely not applied: throttled, or never sent (no connection). Sent
// again after it may have been applied, a conditional write meets its own
// result: an insert finds the entity it created (409 EntityAlreadyExists),
// an If-Match update the ETag it set (412), a delete no entity (404). So
// after a timeout or a broken connection the store answers that the
// outcome is unknown (500 OperationTimedOut, see mapWriteErr) and leaves
// the retry to the client, which can read first. TransactWriteItems keeps
// the client's retryer: the SDK gives each call one ClientRequestToken,
// which makes DynamoDB apply its retries at most once.
var singleWriteRetryer = retry.NewStandard(func(so *retry.StandardOptions) {
	so.MaxAttempts = retryMaxAttempts
	so.MaxBackoff = retryMaxBackoff
	so.RateLimiter = ratelimit.None
	so.Retryables = []retry.IsErrorRetryable{
		retry.NoRetryCanceledError{},
		retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
			return aws.BoolTernary(isThrottled(err) || notSent(err))
		}),
	}
})

// writeAttempts watches the attempts of one write call: whether any of them
// may have reached DynamoDB, which decides what a failure means (see
// mapWriteErr).
type writeAttempts struct{ maybeSent atomic.Bool }

// single is the per-call option of a single-item write: singleWriteRetryer,
// watched.
func (w *writeAttempts) single(o *dynamodb.Options) {
	o.Retryer = attemptWatcher{Retryer: singleWriteRetryer, attempts: w}
}

// transaction is the per-call option of TransactWriteItems: the client's
// retryer, watched.
func (w *writeAttempts) transaction(o *dynamodb.Options) {
	o.Retryer = attemptWatcher{Retryer: o.Retryer, attempts: w}
}

// attemptWatcher sees the error of every failed attempt: the SDK's retry
// middleware asks IsErrorRetryable about each one.
type attemptWatcher struct {
	aws.Retryer
	attempts *writeAttempts
}

func (r attemptWatcher) IsErrorRetryable(err error) bool {
	if !surelyNotApplied(err) || provesSent(err) {
		r.attempts.maybeSent.Store(true)
	}
	return r.Retryer.IsErrorRetryable(err)
}
