package dynamostore

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// tuneClient returns the client the store calls: a *dynamodb.Client is
// rebuilt from its own options with the store's two changes to how requests
// travel (any other API, such as a test double, is used as it is):
//
//   - pageProtocol decodes the entities of Query and Scan pages (see
//     pagejson.go);
//   - singleWriteClient sends each request in one write.
//
// Doing it here, once, covers every client a Store is given, whoever built
// it, at no cost per call.
func tuneClient(api API) API {
	c, ok := api.(*dynamodb.Client)
	if !ok {
		return api
	}
	return dynamodb.New(c.Options(), withPageProtocol, func(o *dynamodb.Options) {
		if _, done := o.HTTPClient.(singleWriteClient); !done && o.HTTPClient != nil {
			o.HTTPClient = singleWriteClient{o.HTTPClient}
		}
	})
}

// singleWriteClient hands net/http each request body as a *bytes.Reader.
// The SDK passes its (in-memory) payload through a reader type net/http
// does not recognize, and for those net/http flushes the headers before
// copying the body, in case the body blocks: two writes, and two TCP
// segments (two TLS records on AWS), for every DynamoDB request. A request
// body net/http knows is in memory goes out with its headers in one write.
type singleWriteClient struct {
	next interface {
		Do(*http.Request) (*http.Response, error)
	}
}

func (c singleWriteClient) Do(req *http.Request) (*http.Response, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength <= 0 {
		return c.next.Do(req)
	}
	payload := make([]byte, req.ContentLength)
	if _, err := io.ReadFull(req.Body, payload); err != nil {
		req.Body.Close()
		return nil, err
	}
	if err := req.Body.Close(); err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(payload))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(payload)), nil }
	return c.next.Do(req)
}
