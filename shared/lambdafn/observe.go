package lambdafn

import (
	"context"
	"log/slog"
	"sync"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Observability: httpapi logs one JSON line per request (request id,
// account, operation, table, status, latency). The Lambda adds to that same
// line, through a slog.Handler that reads the request's context: the Lambda
// request id, the API Gateway request id, and the DynamoDB capacity the
// request consumed, which a middleware on the DynamoDB client collects
// (ReturnConsumedCapacity=TOTAL on every call). Errors stay logged once, by
// httpapi.

type gatewayContextKey struct{}

func withGatewayContext(ctx context.Context, apiRequestID string) context.Context {
	if apiRequestID == "" {
		return ctx
	}
	return context.WithValue(ctx, gatewayContextKey{}, apiRequestID)
}

type capacityKey struct{}

// capacityMeter sums the capacity units of the DynamoDB calls of one
// request, read and write apart (they are billed apart). The store may
// call DynamoDB from several goroutines.
type capacityMeter struct {
	mu          sync.Mutex
	read, write float64
	calls       int
}

func (m *capacityMeter) add(units float64, write bool) {
	m.mu.Lock()
	if write {
		m.write += units
	} else {
		m.read += units
	}
	m.calls++
	m.mu.Unlock()
}

func (m *capacityMeter) total() (read, write float64, calls int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.read, m.write, m.calls
}

func withCapacityMeter(ctx context.Context) context.Context {
	return context.WithValue(ctx, capacityKey{}, &capacityMeter{})
}

func capacityFrom(ctx context.Context) *capacityMeter {
	m, _ := ctx.Value(capacityKey{}).(*capacityMeter)
	return m
}

// MeterCapacity adds the consumed-capacity middleware to DynamoDB client
// options: pass it to dynamodb.New or NewFromConfig. Calls made under a
// request's context then ask for ReturnConsumedCapacity=TOTAL, and the
// units DynamoDB reports are added to that request's log line. Calls
// outside a request (init) are left alone.
func MeterCapacity(o *dynamodb.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("TablebridgeConsumedCapacity", meterCapacity), middleware.Before)
	})
}

func meterCapacity(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	m := capacityFrom(ctx)
	if m == nil {
		return next.HandleInitialize(ctx, in)
	}
	askForCapacity(in.Parameters)
	out, md, err := next.HandleInitialize(ctx, in)
	if err == nil {
		m.add(consumedUnits(out.Result))
	}
	return out, md, err
}

// askForCapacity sets ReturnConsumedCapacity on the inputs the store sends.
// The input is the store's own, built for this one call.
func askForCapacity(params any) {
	const total = types.ReturnConsumedCapacityTotal
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = total
	case *dynamodb.TransactGetItemsInput:
		in.ReturnConsumedCapacity = total
	}
}

// consumedUnits is the capacity a call's answer reports, and whether it
// was a write's.
func consumedUnits(result any) (float64, bool) {
	one := func(c *types.ConsumedCapacity) float64 {
		if c == nil || c.CapacityUnits == nil {
			return 0
		}
		return *c.CapacityUnits
	}
	many := func(cs []types.ConsumedCapacity) float64 {
		sum := 0.0
		for i := range cs {
			sum += one(&cs[i])
		}
		return sum
	}
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		return one(out.ConsumedCapacity), false
	case *dynamodb.PutItemOutput:
		return one(out.ConsumedCapacity), true
	case *dynamodb.UpdateItemOutput:
		return one(out.ConsumedCapacity), true
	case *dynamodb.DeleteItemOutput:
		return one(out.ConsumedCapacity), true
	case *dynamodb.QueryOutput:
		return one(out.ConsumedCapacity), false
	case *dynamodb.ScanOutput:
		return one(out.ConsumedCapacity), false
	case *dynamodb.TransactWriteItemsOutput:
		return many(out.ConsumedCapacity), true
	case *dynamodb.TransactGetItemsOutput:
		return many(out.ConsumedCapacity), false
	}
	return 0, false
}

// logHandler adds the Lambda and API Gateway request ids and the consumed
// capacity of the request whose context a record is logged with.
type logHandler struct{ slog.Handler }

// NewLogHandler wraps next so that every record logged with a request's
// context carries lambdaRequestId, apiRequestId and, once the request
// called DynamoDB, consumedCapacity (units; readCapacity and writeCapacity
// apart) and dynamodbCalls.
func NewLogHandler(next slog.Handler) slog.Handler { return logHandler{next} }

func (h logHandler) Handle(ctx context.Context, r slog.Record) error {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		r.AddAttrs(slog.String("lambdaRequestId", lc.AwsRequestID))
	}
	if id, ok := ctx.Value(gatewayContextKey{}).(string); ok {
		r.AddAttrs(slog.String("apiRequestId", id))
	}
	if m := capacityFrom(ctx); m != nil {
		if read, write, calls := m.total(); calls > 0 {
			r.AddAttrs(slog.Float64("consumedCapacity", read+write), slog.Float64("readCapacity", read),
				slog.Float64("writeCapacity", write), slog.Int("dynamodbCalls", calls))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return logHandler{h.Handler.WithAttrs(attrs)}
}

func (h logHandler) WithGroup(name string) slog.Handler { return logHandler{h.Handler.WithGroup(name)} }
