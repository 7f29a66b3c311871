package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tablebridge/tablebridge/shared/store"
)

func errKeyTooLong(n, limit int) error {
	return fmt.Errorf("dynamostore: key of %d bytes (UTF-8) exceeds DynamoDB's %d-byte key limit: %w", n, limit, store.ErrKeyTooLong)
}

// isThrottled recognizes DynamoDB's "slow down" answers by their types in
// service/dynamodb/types, never by message text: the types are the SDK's
// API, the words of a message are not. They
// become store.ErrBusy, which the service answers with 503 ServerBusy so
// the Azure SDKs retry. LimitExceededException is the control plane's: too
// many tables being created or deleted at once, or the account's table
// quota. TransactionInProgressException and TransactionConflictException
// are contention on the items; a write after an attempt that may have been
// sent reads them as an unknown outcome instead (mapWriteErr).
func isThrottled(err error) bool {
	var (
		pte *types.ProvisionedThroughputExceededException
		te  *types.ThrottlingException
		rle *types.RequestLimitExceeded
		lee *types.LimitExceededException
		tip *types.TransactionInProgressException
		tce *types.TransactionConflictException
	)
	return errors.As(err, &pte) || errors.As(err, &te) || errors.As(err, &rle) ||
		errors.As(err, &lee) || errors.As(err, &tip) || errors.As(err, &tce)
}

// isTableMissing: DynamoDB's ResourceNotFoundException, a table that does
// not exist (or is not ACTIVE yet).
func isTableMissing(err error) bool {
	var rnf *types.ResourceNotFoundException
	return errors.As(err, &rnf)
}

// isTableInUse: ResourceInUseException, a table created or deleted while
// it exists or is being deleted.
func isTableInUse(err error) bool {
	var riu *types.ResourceInUseException
	return errors.As(err, &riu)
}

// isTransactionConflict: a single write or transaction that met another
// transaction holding one of its items.
func isTransactionConflict(err error) bool {
	var tce *types.TransactionConflictException
	return errors.As(err, &tce)
}

// hasUnmodeledCode reports an API error whose code DynamoDB's model has no
// type for (ValidationException, UnknownOperationException): the SDK hands
// these back as a smithy.GenericAPIError, whose code is the only typed
// field. The code is part of the API, unlike the message.
func hasUnmodeledCode(err error, code string) bool {
	var ge *smithy.GenericAPIError
	return errors.As(err, &ge) && ge.Code == code
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
	var quota ratelimit.QuotaExceededError
	switch {
	case isThrottled(err):
		return fmt.Errorf("dynamostore: %s: DynamoDB throttled the request (%s): %w", op, apiCode(err), store.ErrBusy)
	case errors.As(err, &quota):
		// The SDK's client-side retry quota ran dry after many throttles
		// or timeouts (a client built without Configure).
		return fmt.Errorf("dynamostore: %s: %w: %w", op, store.ErrBusy, err)
	case isTableMissing(err):
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

// mapWriteErr is mapErr for a write, whose failure must tell the client
// whether it was applied: Azure's 503 ServerBusy means "not performed",
// its 500 OperationTimedOut that the outcome is unknown.
//   - When no attempt may have reached DynamoDB (maybeSent false: each
//     was throttled, refused, or never sent, and the time ran out between
//     them), nothing was applied: mapErr's mapping, 503 for throttling, a
//     refused connection or a deadline, and other API errors (validation,
//     a missing table) as they are.
//   - Once any attempt may have reached DynamoDB (a timeout, a reset
//     connection, DynamoDB's 500 InternalServerError, which AWS documents
//     as "may or may not have succeeded"), the answer is
//     store.ErrOutcomeUnknown, 500 OperationTimedOut, whatever the last
//     attempt's error: a later attempt that was throttled, refused or
//     found the transaction still in progress says nothing about the
//     earlier one, which DynamoDB may have applied or may still apply.
//     Answering 503 there would tell the client a write that happened
//     did not (SECURITY.md, "What a failed write means"). A transaction
//     cancelled by its own
//     conditions is the one definite answer after such an attempt; the
//     callers read it (cancelledByConditions) before they get here.
//   - TransactionInProgressException is itself proof that an earlier
//     attempt with the same ClientRequestToken reached DynamoDB and is
//     still running, so it is an unknown outcome, not throttling.
func mapWriteErr(op string, err error, maybeSent bool) error {
	if err == nil {
		return nil
	}
	if !maybeSent && !provesSent(err) {
		return mapErr(op, err)
	}
	return fmt.Errorf("dynamostore: %s: DynamoDB did not confirm the write: %w: %w", op, store.ErrOutcomeUnknown, err)
}

// provesSent reports whether the failed attempt err shows that an earlier
// attempt of the same call reached DynamoDB: TransactionInProgressException
// answers a TransactWriteItems whose ClientRequestToken belongs to a
// transaction DynamoDB is still running.
func provesSent(err error) bool {
	var tip *types.TransactionInProgressException
	return errors.As(err, &tip)
}

// cancelledByConditions reports whether a cancelled transaction failed only
// on its own conditions (or an update outgrowing its item): DynamoDB
// evaluated it and applied none of it, a definite answer even after an
// earlier attempt may have been sent, since a retry with the same
// ClientRequestToken of an applied transaction succeeds instead. Any other
// reason (a conflict with another transaction, throttling) leaves an
// earlier attempt's fate open.
func cancelledByConditions(tce *types.TransactionCanceledException) bool {
	definite := false
	for _, r := range tce.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "", "None":
		case "ConditionalCheckFailed", "ValidationError":
			definite = true
		default:
			return false
		}
	}
	return definite
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
	// A refusal can also surface outside a dial (a proxy's, or the SDK's
	// own wrapping): the system error says it, whatever the words.
	return errors.Is(err, syscall.ECONNREFUSED)
}

// serverFault reports whether err is a 5xx answer of DynamoDB's.
func serverFault(err error) bool {
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() >= 500
}
