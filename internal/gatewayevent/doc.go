// Package gatewayevent turns an HTTP request into the event a Lambda
// function receives behind each profile of the deployment, starting from
// aws-lambda-go's published event samples (events/testdata, at the version
// go.mod pins, read from the module cache), and turns the function's answer
// back into an HTTP response. Tests use it to stand in for API Gateway and
// Function URLs in front of the real bootstraps; it is not part of any
// request path in Lambda, and no function binary links it (a test in
// functions/ checks their dependencies).
//
// It also synthesizes the events of events/ (Samples, one signed REST API
// event per operation, written by make events through cmd/events),
// builds a REST API event directly (NewEvent, for tests and benchmarks of
// the runtime), and signs a stored event again (ResignEvent).
//
// What each front door does to a request, as the samples, AWS's
// documentation and public reports show it:
//
//   - REST API (apigw-request.json, payload 1.0): path below the stage,
//     percent-encoded; requestContext.path the full path; decoded
//     multi-value query parameters; multiValueHeaders with every value.
//     BinaryMediaTypes */* makes every body base64 (see template.yaml for
//     why: 4/3 whatever the content, where text would be JSON-escaped).
//   - HTTP API (apigw-v2-request-*.json, payload 2.0): rawPath decoded, with
//     a named stage in front (not $default); headers lower-case, repeated
//     ones joined with commas; cookies apart; rawQueryString as sent;
//     text bodies (text/*, JSON, XML) as text, others base64, so a $batch
//     (multipart/mixed) arrives base64 as on the REST API. Behind a custom domain rawPath
//     leaves the base path out (Options.RawPathKeepsBasePath tries the
//     other reading).
//   - Function URL (lambda-urls-request.json, payload 2.0): rawPath as sent
//     (percent-encoded), no stage, no route key.
package gatewayevent
