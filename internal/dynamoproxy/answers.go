package dynamoproxy

import (
	"net/http"
	"strings"
)

// The answers the proxy gives in DynamoDB's place. All are HTTP 400 with a
// JSON 1.0 body naming the exception in __type ("Error Handling",
// Programming.Errors in the Developer Guide), members named as the service
// model names them: ThrottlingException has message and throttlingReasons,
// ProvisionedThroughputExceededException message and ThrottlingReasons,
// TransactionCanceledException Message and CancellationReasons (the SDK's
// response snapshots, aws-sdk-go-v2 service/dynamodb/response_snapshot).

// Messages DynamoDB gives with a throttled request. On-demand tables
// answer ThrottlingException, 400, with the first message (the service's
// answer as an aws-sdk-go-v2 client logged it in
// github.com/praetorian-inc/chariot-ui/issues/684), provisioned ones
// ProvisionedThroughputExceededException; the four texts are those the
// TransactionCanceledException reference lists for each case.
const (
	onDemandTableMessage = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically " +
		"scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: " +
		"https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html"
	onDemandIndexMessage = "Throughput exceeds the current capacity for one or more global secondary indexes. " +
		"DynamoDB is automatically scaling your index so please try again shortly."
	provisionedTableMessage = "The level of configured provisioned throughput for the table was exceeded. " +
		"Consider increasing your provisioning level with the UpdateTable API."
	provisionedIndexMessage = "The level of configured provisioned throughput for one or more global secondary indexes " +
		"of the table was exceeded. Consider increasing your provisioning level for the under-provisioned global " +
		"secondary indexes with the UpdateTable API"
	// conflictMessage is TransactionConflictException's description in the
	// API reference; conflictReasonMessage the TransactionConflict
	// cancellation reason's.
	conflictMessage       = "Operation was rejected because there is an ongoing transaction for the item."
	conflictReasonMessage = "Transaction is ongoing for the item."
	// inProgressMessage is the service's, as an aws-sdk-java-v2 client
	// logged it (github.com/aws/aws-sdk-java-v2/issues/2518).
	inProgressMessage = "Transaction from previous request is still in progress"
)

// throttleCause is the bucket a request found empty: a table's or an
// index's, for reads or for writes.
type throttleCause struct {
	table *tableSchema
	index string
	write bool
}

// reason is the ThrottlingReason DynamoDB reports ("ThrottlingReason", API
// Reference): ResourceType + OperationType + LimitType, here always a key
// range (one partition) over its throughput, and the table's or index's ARN.
func (c throttleCause) reason() map[string]string {
	resource, arn := "Table", c.table.arn
	if ix := c.table.index(c.index); ix != nil {
		resource, arn = "Index", ix.arn
	}
	op := "Read"
	if c.write {
		op = "Write"
	}
	return map[string]string{"reason": resource + op + "KeyRangeThroughputExceeded", "resource": arn}
}

func (c throttleCause) message() string {
	indexWrite := c.write && c.index != ""
	switch {
	case c.table.onDemand && indexWrite:
		return onDemandIndexMessage
	case c.table.onDemand:
		return onDemandTableMessage
	case indexWrite:
		return provisionedIndexMessage
	}
	return provisionedTableMessage
}

// exception is the answer to a request (or a whole batch) throttled.
func (c throttleCause) exception() []byte {
	reasons := []map[string]string{c.reason()}
	if c.table.onDemand {
		return errorBody("ThrottlingException", map[string]any{"message": c.message(), "throttlingReasons": reasons})
	}
	return errorBody("ProvisionedThroughputExceededException", map[string]any{"message": c.message(), "ThrottlingReasons": reasons})
}

// cancellation is the reason a throttled item gives in a cancelled
// transaction: ThrottlingError on on-demand tables,
// ProvisionedThroughputExceeded on provisioned ones.
func (c throttleCause) cancellation() cancellation {
	if c.table.onDemand {
		return cancellation{Code: "ThrottlingError", Message: c.message()}
	}
	return cancellation{Code: "ProvisionedThroughputExceeded", Message: c.message()}
}

// cancellation is one item's entry in CancellationReasons. An item that did
// not cause the cancellation has Code "None" and no Message.
type cancellation struct {
	Code    string `json:"Code"`
	Message string `json:"Message,omitempty"`
}

// cancelled is TransactionCanceledException with one reason per item, in
// the request's order, and the message DynamoDB builds from their codes.
func cancelled(reasons []cancellation) []byte {
	codes := make([]string, len(reasons))
	for i, r := range reasons {
		codes[i] = r.Code
	}
	return errorBody("TransactionCanceledException", map[string]any{
		"Message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + strings.Join(codes, ", ") + "]",
		"CancellationReasons": reasons,
	})
}

// conflictBody answers a write that met another transaction: a transaction
// is cancelled on its first item, a single-item write refused.
func conflictBody(a *analysis) []byte {
	if a.op == "TransactWriteItems" || a.op == "TransactGetItems" {
		reasons := make([]cancellation, len(a.accesses))
		for i := range reasons {
			reasons[i] = cancellation{Code: "None"}
		}
		reasons[0] = cancellation{Code: "TransactionConflict", Message: conflictReasonMessage}
		return cancelled(reasons)
	}
	return errorBody("TransactionConflictException", map[string]any{"message": conflictMessage})
}

func inProgressBody() []byte {
	return errorBody("TransactionInProgressException", map[string]any{"Message": inProgressMessage})
}

func internalErrorBody() []byte {
	return errorBody("InternalServerError", map[string]any{"message": "Internal server error"})
}

// sendThrottled answers a request throttled as a whole, by the capacity
// model (causes: the empty bucket of each throttled access, nil for those
// not throttled) or by a fault (every access throttled on its own key).
func sendThrottled(w http.ResponseWriter, a *analysis, causes []*throttleCause) {
	if a.op == "TransactWriteItems" || a.op == "TransactGetItems" {
		reasons := make([]cancellation, len(a.accesses))
		for i, c := range causes {
			reasons[i] = cancellation{Code: "None"}
			if c != nil {
				reasons[i] = c.cancellation()
			}
		}
		writeAnswer(w, http.StatusBadRequest, nil, cancelled(reasons))
		return
	}
	for _, c := range causes {
		if c != nil {
			writeAnswer(w, http.StatusBadRequest, nil, c.exception())
			return
		}
	}
}
