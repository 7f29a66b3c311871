package lambdafn

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tablebridge/tablebridge/shared/auth"
)

// What the external tests reach beyond the package's API.

// ServeV1 serves a REST API event (payload format 1.0).
func (h *Handler) ServeV1(ctx context.Context, ev events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	return h.serveV1(ctx, ev, false)
}

// NewRequestV2 turns a payload format 2.0 event into the request the
// handler serves.
var NewRequestV2 = newRequestV2

// ParseKeySecret reads the keys secret of account.
func ParseKeySecret(secret, account string) (auth.Account, error) {
	acc, _, err := parseSecret(secret, account)
	return acc, err
}

// NewRequest turns a REST API event (payload format 1.0) into the request
// the handler serves.
func NewRequest(ctx context.Context, ev events.APIGatewayProxyRequest) (*http.Request, error) {
	return newRequestV1(ctx, ev, false)
}

// Serve runs r through handler and returns the payload format 1.0 answer.
var Serve = serveHTTP
