package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tablebridge/tablebridge/shared/store"
)

func errKeyTooLong(n, limit int) error {
	return fmt.Errorf("dynamostore: key of %d bytes (UTF-8) exceeds DynamoDB's %d-byte key limit: %w", n, limit, store.ErrKeyTooLong)
}

// throttleCodes are DynamoDB's "slow down" answers. They become
// store.ErrBusy, which the service answers with 503 ServerBusy so the Azure
// SDKs retry. LimitExceededException is the control plane's: too many
// tables being created or deleted at once, or the account's table quota.
var throttleCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
	"LimitExceededException":                 true,
	"TransactionInProgressException":         true,
	"TransactionConflictException":           true,
}

// apiCode returns the DynamoDB error code of err, or "".
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// mapErr turns an SDK error into the store's sentinel errors: throttling to
// ErrBusy; an unreachable endpoint, a network failure or a deadline to
// ErrUnavailable; a missing table to ErrTableNotFound. Anything else stays
// an internal error with the operation named.
func mapErr(op string, err error) error {
	if err == nil {
		return nil
	}
	code := apiCode(err)
	var quota ratelimit.QuotaExceededError
	switch {
	case throttleCodes[code]:
		return fmt.Errorf("dynamostore: %s: DynamoDB throttled the request (%s): %w", op, code, store.ErrBusy)
	case errors.As(err, &quota):
		// The SDK's client-side retry quota ran dry after many throttles
		// or timeouts (a client built without Configure).
		return fmt.Errorf("dynamostore: %s: %w: %w", op, store.ErrBusy, err)
	case code == "ResourceNotFoundException":
		return fmt.Errorf("dynamostore: %s: %w", op, store.ErrTableNotFound)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("dynamostore: %s: DynamoDB did not answer in time: %w: %w", op, store.ErrUnavailable, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("dynamostore: %s: request canceled: %w: %w", op, store.ErrUnavailable, err)
	case isNetworkError(err):
		return fmt.Errorf("dynamostore: %s: cannot reach DynamoDB: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("dynamostore: %s: %w", op, err)
}

func isNetworkError(err error) bool {
	var send *smithyhttp.RequestSendError
	var netErr net.Error
	return errors.As(err, &send) || errors.As(err, &netErr)
}

func isConditionFailed(err error) (item, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return ccf.Item, true
	}
	return nil, false
}

func isCode(err error, code string) bool { return apiCode(err) == code }

// mapWriteErr is mapErr for a write, whose failure must tell the client
// whether it was applied: Azure's 503 ServerBusy means "not performed",
// its 500 OperationTimedOut that the outcome is unknown.
//   - When no attempt may have reached DynamoDB (maybeSent false: each
//     was throttled, refused, or never sent, and the time ran out between
//     them), nothing was applied: mapErr's mapping, 503 for a deadline.
//   - Throttling and refused connections are 503 as well, and other API
//     errors (validation, a missing table) keep mapErr's mapping.
//   - Anything else after a request may have been sent (a timeout, a
//     reset connection, DynamoDB's 500 InternalServerError, which AWS
//     documents as "may or may not have succeeded") is
//     store.ErrOutcomeUnknown: 500 OperationTimedOut.
func mapWriteErr(op string, err error, maybeSent bool) error {
	if err == nil || !maybeSent || surelyNotApplied(err) {
		return mapErr(op, err)
	}
	var quota ratelimit.QuotaExceededError
	if errors.As(err, &quota) {
		return mapErr(op, err)
	}
	return fmt.Errorf("dynamostore: %s: DynamoDB did not confirm the write: %w: %w", op, store.ErrOutcomeUnknown, err)
}

// surelyNotApplied reports whether the failed attempt err cannot have
// changed anything: DynamoDB answered with a client error (throttling, a
// failed condition, validation), or the request never left.
func surelyNotApplied(err error) bool {
	return (apiCode(err) != "" && !serverFault(err)) || notSent(err)
}

// notSent reports whether err shows the request never reached DynamoDB: the
// connection could not be made (refused, unreachable, no such host), or the
// request was cancelled or timed out while the SDK still waited to send it.
func notSent(err error) bool {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	return strings.Contains(err.Error(), "connection refused")
}

// serverFault reports whether err is a 5xx answer of DynamoDB's.
func serverFault(err error) bool {
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() >= 500
}
