package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net"

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
