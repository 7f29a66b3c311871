package dynamostore

import (
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
