package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tablebridge/tablebridge/internal/dynamolocal"
	"github.com/tablebridge/tablebridge/shared/store"
)

func TestMapErr(t *testing.T) {
	t.Parallel()
	op := func(err error) error {
		// The SDK wraps service errors in an OperationError.
		return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "PutItem", Err: err}
	}
	cases := []struct {
		name string
		err  error
		want error // nil: none of the sentinels below
	}{
		{"ProvisionedThroughputExceeded", op(&types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}), store.ErrBusy},
		{"Throttling", op(&types.ThrottlingException{}), store.ErrBusy},
		{"RequestLimitExceeded", op(&types.RequestLimitExceeded{}), store.ErrBusy},
		{"LimitExceeded", op(&types.LimitExceededException{}), store.ErrBusy},
		{"TransactionConflict", op(&types.TransactionConflictException{}), store.ErrBusy},
		{"RetryQuotaExceeded", op(fmt.Errorf("failed to get rate limit token, %w", ratelimit.QuotaExceededError{Available: 0, Requested: 5})), store.ErrBusy},
		{"ResourceNotFound", op(&types.ResourceNotFoundException{}), store.ErrTableNotFound},
		{"Deadline", op(context.DeadlineExceeded), store.ErrUnavailable},
		{"Canceled", op(context.Canceled), store.ErrUnavailable},
		{"ConnectionRefused", op(&smithyhttp.RequestSendError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}}), store.ErrUnavailable},
		// A refusal that is not a dial's (through a proxy, say) is known by
		// its system error, not its words.
		{"ConnectionRefusedOnRead", op(&smithyhttp.RequestSendError{Err: &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNREFUSED)}}), store.ErrUnavailable},
		{"TransactionInProgress", op(&types.TransactionInProgressException{}), store.ErrBusy},
		{"DNS", op(&net.DNSError{Err: "no such host", Name: "dynamodb.invalid"}), store.ErrUnavailable},
		{"Validation", op(&smithy.GenericAPIError{Code: "ValidationException", Message: "bad"}), nil},
		{"InternalServerError", op(&types.InternalServerError{}), nil},
	}
	sentinels := []error{store.ErrBusy, store.ErrUnavailable, store.ErrTableNotFound}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := mapErr("write entity", c.err)
			if !strings.Contains(got.Error(), "write entity") {
				t.Errorf("error %q does not name the operation", got)
			}
			for _, s := range sentinels {
				if is := errors.Is(got, s); is != (s == c.want) {
					t.Errorf("errors.Is(%v, %v) = %t", got, s, is)
				}
			}
		})
	}
	if mapErr("x", nil) != nil {
		t.Error("mapErr(nil) is not nil")
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		client API
		opts   Options
	}{
		{"NilClient", nil, Options{}},
		{"PrefixWithSlash", stubAPI{}, Options{TablePrefix: "a/b"}},
		{"PrefixTooLong", stubAPI{}, Options{TablePrefix: strings.Repeat("p", 250)}},
		{"SharedBadChars", stubAPI{}, Options{SharedTable: "entities/1"}},
		{"CatalogTooShort", stubAPI{}, Options{CatalogTable: "ab"}},
		{"CatalogBadChars", stubAPI{}, Options{CatalogTable: "cat alog"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := New(t.Context(), c.client, c.opts); err == nil {
				t.Error("New succeeded; want an error")
			}
		})
	}
}

// stubAPI satisfies API for option validation, which fails before any call.
type stubAPI struct{ API }

// catalogStatusAPI answers DescribeTable with a fixed table status and
// counts the calls; every other method is unset.
type catalogStatusAPI struct {
	API
	status    types.TableStatus
	describes int
}

func (c *catalogStatusAPI) DescribeTable(context.Context, *dynamodb.DescribeTableInput, ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error) {
	c.describes++
	return &dynamodb.DescribeTableOutput{Table: &types.TableDescription{TableStatus: c.status}}, nil
}

// TestNewUsesUpdatingCatalog: a table being UPDATING (a billing mode,
// throughput or stream change, which can last an hour) stays available for
// data operations, so New must take it as it is, not wait for ACTIVE; a
// CREATING one is not writable yet and is waited for. (The same goes for
// the shared table.)
func TestNewUsesUpdatingCatalog(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status    types.TableStatus
		wantReady bool
	}{
		{types.TableStatusActive, true},
		{types.TableStatusUpdating, true},
		{types.TableStatusCreating, false},
	}
	for _, c := range cases {
		t.Run(string(c.status), func(t *testing.T) {
			api := &catalogStatusAPI{status: c.status}
			// A local endpoint: New creates (and so describes) the catalog.
			_, err := New(t.Context(), api, Options{Endpoint: "http://127.0.0.1:1", TableWaitTimeout: 300 * time.Millisecond})
			switch {
			case c.wantReady && (err != nil || api.describes != 2):
				t.Errorf("New = %v after %d DescribeTable calls; want nil after 2 (the catalog, the shared table)", err, api.describes)
			case !c.wantReady && !errors.Is(err, store.ErrUnavailable):
				t.Errorf("New = %v; want ErrUnavailable once the wait for ACTIVE ends", err)
			}
		})
	}
}

// TestLocalEndpoint: the store creates its catalog and shared table only
// on an explicit endpoint on this machine (DynamoDB Local).
func TestLocalEndpoint(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		endpoint string
		want     bool
	}{
		{"", false},
		{"http://127.0.0.1:8000", true},
		{"http://localhost:8000", true},
		{"http://[::1]:8000", true},
		{"http://127.8.9.10:8000", true},
		{"https://dynamodb.eu-west-1.amazonaws.com", false},
		{"https://vpce-1a2b3c4d-5e6f.dynamodb.us-east-1.vpce.amazonaws.com", false},
		{"http://10.0.0.5:8000", false},
		{"http://host.docker.internal:8000", false},
		{"http://localhost.example.com:8000", false},
		{"::not a url", false},
	} {
		if got := (Options{Endpoint: c.endpoint}).withDefaults().createsTables; got != c.want {
			t.Errorf("Options{Endpoint: %q} creates tables: %t, want %t", c.endpoint, got, c.want)
		}
	}
}

// TestRequireCatalog: on any endpoint but a local one (AWS's), New refuses
// a missing catalog instead of creating it empty, and creates nothing.
func TestRequireCatalog(t *testing.T) {
	t.Parallel()
	ctx := dynamolocal.Context(t, testTimeout)
	client := dynamolocal.Client(t)
	prefix := dynamolocal.UniqueName("tbreq") + "."
	_, err := New(ctx, client, Options{TablePrefix: prefix})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("New without a catalog = %v; want ErrUnavailable", err)
	}
	if _, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(prefix + "catalog")}); !isTableMissing(err) {
		t.Fatalf("the catalog was created: %v", err)
	}
	// Once it exists (the stack made it), New opens it.
	if _, err := New(ctx, client, Options{TablePrefix: prefix, Endpoint: dynamolocal.Endpoint(t)}); err != nil {
		t.Fatal(err)
	}
	if _, err := New(ctx, client, Options{TablePrefix: prefix}); err != nil {
		t.Fatalf("New with the catalog there: %v", err)
	}
}

func TestOpErrorIndex(t *testing.T) {
	t.Parallel()
	// Errors found before any request (the table's look-up is cached)
	// still name the op.
	s := &Store{opts: Options{}.withDefaults()}
	s.cache.put("acct", "table", *testLoc, time.Hour)
	ops := []store.Op{
		{Kind: store.OpInsert, Entity: entityWith("p", "a", nil)},
		{Kind: store.OpInsert, Entity: entityWith("p", strings.Repeat("r", 1025), nil)},
	}
	err := s.Write(t.Context(), "acct", "table", ops)
	var opErr *store.OpError
	if !errors.As(err, &opErr) || opErr.Index != 1 || !errors.Is(err, store.ErrKeyTooLong) {
		t.Errorf("Write = %v; want OpError at 1 wrapping ErrKeyTooLong", err)
	}
	many := entityWith("p", "m", nil)
	many.Properties = binaries(253, 1)
	err = s.Write(t.Context(), "acct", "table", []store.Op{{Kind: store.OpMerge, Entity: many}})
	if !errors.As(err, &opErr) || opErr.Index != 0 || !errors.Is(err, store.ErrTooManyProperties) {
		t.Errorf("merge of 253 properties = %v; want OpError at 0 wrapping ErrTooManyProperties", err)
	}
	err = s.Write(t.Context(), "acct", "table", []store.Op{{Kind: store.OpDelete}})
	if !errors.As(err, &opErr) || opErr.Index != 0 {
		t.Errorf("op without entity = %v; want OpError at 0", err)
	}
}

func TestIsItemTooLarge(t *testing.T) {
	t.Parallel()
	op := func(err error) error {
		return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "UpdateItem", Err: err}
	}
	for _, tc := range []struct {
		msg  string
		want bool
	}{
		// DynamoDB's words for an UpdateItem whose result outgrows an item,
		// and for an expression too large for one request.
		{"Item size to update has exceeded the maximum allowed size", true},
		{"Expression size has exceeded the maximum allowed size", true},
		{"Item size has exceeded the maximum allowed size", true},
		{"One or more parameter values were invalid", false},
	} {
		err := op(&smithy.GenericAPIError{Code: "ValidationException", Message: tc.msg})
		if got := isItemTooLarge(err); got != tc.want {
			t.Errorf("isItemTooLarge(%q) = %v, want %v", tc.msg, got, tc.want)
		}
	}
	if isItemTooLarge(op(&smithy.GenericAPIError{Code: "ThrottlingException", Message: "Item size to update has exceeded the maximum allowed size"})) {
		t.Error("a throttling error taken for a size error")
	}
}

// TestMapWriteErr: 503 (ErrBusy, ErrUnavailable) only for what surely was
// not applied; once an attempt may have been, ErrOutcomeUnknown (500
// OperationTimedOut) whatever the last attempt's error (SECURITY.md, "What
// a failed write means").
func TestMapWriteErr(t *testing.T) {
	t.Parallel()
	op := func(err error) error {
		return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "PutItem", Err: err}
	}
	serverError := func(status int, err error) error {
		return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: err}
	}
	cases := []struct {
		name string
		err  error
		// want is the answer when no attempt may have been sent before the
		// last one (and the last one's own fate decides).
		want error
	}{
		{"Throttling", op(&types.ThrottlingException{}), store.ErrBusy},
		{"ProvisionedThroughputExceeded", op(serverError(400, &types.ProvisionedThroughputExceededException{})), store.ErrBusy},
		{"RetryQuotaExceeded", op(fmt.Errorf("failed to get rate limit token, %w", ratelimit.QuotaExceededError{Available: 0, Requested: 5})), store.ErrBusy},
		{"ConnectionRefused", op(&smithyhttp.RequestSendError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}), store.ErrUnavailable},
		{"DNS", op(&net.DNSError{Err: "no such host", Name: "dynamodb.invalid"}), store.ErrUnavailable},
		{"ResourceNotFound", op(&types.ResourceNotFoundException{}), store.ErrTableNotFound},
		{"Validation", op(serverError(400, &smithy.GenericAPIError{Code: "ValidationException", Message: "bad"})), nil},
		// Proof that an earlier attempt reached DynamoDB and still runs.
		{"TransactionInProgress", op(&types.TransactionInProgressException{}), store.ErrOutcomeUnknown},
	}
	sentinels := []error{store.ErrBusy, store.ErrUnavailable, store.ErrTableNotFound, store.ErrOutcomeUnknown}
	check := func(t *testing.T, got, want error) {
		t.Helper()
		for _, s := range sentinels {
			if is := errors.Is(got, s); is != (s == want) {
				t.Errorf("errors.Is(%v, %v) = %t", got, s, is)
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name+"/NothingSentBefore", func(t *testing.T) {
			check(t, mapWriteErr("write entity", c.err, false), c.want)
		})
		t.Run(c.name+"/MaybeSentBefore", func(t *testing.T) {
			check(t, mapWriteErr("write entity", c.err, true), store.ErrOutcomeUnknown)
		})
	}
	// Time ran out between attempts none of which may have been sent (each
	// refused, say): nothing was applied.
	if got := mapWriteErr("write entity", op(context.DeadlineExceeded), false); !errors.Is(got, store.ErrUnavailable) {
		t.Errorf("deadline with nothing sent: %v, want ErrUnavailable", got)
	}
}

func TestCancelledByConditions(t *testing.T) {
	t.Parallel()
	reasons := func(codes ...string) *types.TransactionCanceledException {
		tce := &types.TransactionCanceledException{}
		for _, c := range codes {
			tce.CancellationReasons = append(tce.CancellationReasons, types.CancellationReason{Code: aws.String(c)})
		}
		return tce
	}
	for _, c := range []struct {
		codes []string
		want  bool
	}{
		{[]string{"None", "ConditionalCheckFailed"}, true},
		{[]string{"ValidationError", "None"}, true},
		{[]string{"ConditionalCheckFailed", "TransactionConflict"}, false},
		{[]string{"None", "ThrottlingError"}, false},
		{[]string{"None", "None"}, false},
	} {
		if got := cancelledByConditions(reasons(c.codes...)); got != c.want {
			t.Errorf("cancelledByConditions(%v) = %t, want %t", c.codes, got, c.want)
		}
	}
}

// The retryer of single writes sends again only what surely was not
// applied.
func TestSingleWriteRetryer(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		err   error
		retry bool
	}{
		{"Throttling", &types.ThrottlingException{}, true},
		{"ConnectionRefused", &smithyhttp.RequestSendError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}}, true},
		{"ReadTimeout", &smithyhttp.RequestSendError{Err: &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}}, false},
		{"ConnectionReset", &smithyhttp.RequestSendError{Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, false},
		{"InternalServerError", &types.InternalServerError{}, false},
		{"Canceled", &aws.RequestCanceledError{Err: context.Canceled}, false},
	}
	for _, c := range cases {
		if got := singleWriteRetryer.IsErrorRetryable(c.err); got != c.retry {
			t.Errorf("%s: retryable %t, want %t", c.name, got, c.retry)
		}
	}
}

func TestAttemptWatcher(t *testing.T) {
	t.Parallel()
	var w writeAttempts
	r := attemptWatcher{Retryer: singleWriteRetryer, attempts: &w}
	r.IsErrorRetryable(&smithyhttp.RequestSendError{Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}})
	r.IsErrorRetryable(&types.ThrottlingException{})
	if w.maybeSent.Load() {
		t.Fatal("a refused and a throttled attempt count as maybe sent")
	}
	r.IsErrorRetryable(&smithyhttp.RequestSendError{Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}})
	if !w.maybeSent.Load() {
		t.Fatal("a reset connection does not count as maybe sent")
	}
	var tw writeAttempts
	attemptWatcher{Retryer: singleWriteRetryer, attempts: &tw}.IsErrorRetryable(&types.TransactionInProgressException{})
	if !tw.maybeSent.Load() {
		t.Fatal("TransactionInProgressException does not count as proof of an attempt sent")
	}
}
