// Package lambdafn is the runtime that runs the Table REST API as Lambda
// functions behind API Gateway (a REST API or an HTTP API) or a Lambda
// function URL: the adapter between events and http.Request
// (Handler.Invoke), the configuration from the
// environment (LoadConfig), and Main, which every functions/<name>/main.go
// calls. What the deployment is (its functions, their routes and IAM
// actions) is shared/deploy's; building events for tests and events/ is
// internal/gatewayevent's, which no function binary links.
//
// # Payload formats
//
// Handler.Invoke reads the raw event and answers in its format: a REST
// API event (format 1.0, no version field) or an HTTP API event of
// version "1.0" gets statusCode, multiValueHeaders and body; a version
// "2.0" event (HTTP API, Function URL) gets statusCode, headers, cookies
// and body. Request headers are rebuilt from the raw event, value by
// value, never split on commas: aws-lambda-go-api-proxy's 2.0 adapter
// splits every value on commas, which breaks "x-ms-date: Sun, 11 Oct 2009
// 21:49:42 GMT" and with it every Shared Key signature.
//
// # Paths and signatures
//
// Shared Key signs the path the client sent. On the execute-api domain
// that path starts with the stage ("/Prod/acct/Tables"): a REST API's
// event path leaves it out but requestContext.path keeps it; an HTTP API
// keeps a named stage in rawPath. Behind a custom domain the client signed
// the base path instead: a REST API's requestContext.path has it, an HTTP
// API's rawPath does not, so it comes from TABLEBRIDGE_BASE_PATH. REST
// APIs and Function URLs keep the path percent-encoded as sent, and the
// signature is verified over that spelling only. HTTP APIs decode it,
// losing the client's spelling of odd key characters: for those events
// (httpapi.WithDecodedPath) the verifier tries the spellings the SDKs
// produce, each of which decodes back to the delivered path, so a
// signature still authorizes only the entity the path names (see
// shared/auth, Request.PathDecoded). The handler
// routes on the part below the stage or base path and gets the signed path
// through httpapi.WithSignedPath; it also puts the prefix into
// odata.metadata and Location URLs.
//
// # One function per operation
//
// Each function (shared/deploy.Function) serves the operations of its
// routes and reaches only the store methods of those operations: anything
// else is refused with 405 MethodNotAllowed rather than failing in DynamoDB
// for want of an IAM permission (see guardStore). template.yaml grants each
// function exactly the DynamoDB actions of those store methods
// (deploy.Function.DynamoDBActions); a test in functions/ compares the two.
//
// # Limits of the platform
//
// Each request works under a deadline a second before the first of API
// Gateway's 29 s, counted from the event's receipt time, and the
// invocation's own deadline (deadline.go), so a slow step ends in an Azure
// answer rather than the gateway's 504. Query answers are counted as their
// body stands, JSON-escaped, in the proxy response, against 5 MiB of
// Lambda's 6,291,556-byte response limit (envelope.go).
//
// # Init
//
// Configuration, the DynamoDB client, the store (which checks the catalog
// table) and the account keys (one Secrets Manager GetSecretValue) are
// built once per execution environment, never per request. An init failure
// is posted to the Runtime API's /runtime/init/error.
//
// # Observability
//
// httpapi logs one JSON line per request; NewLogHandler adds the Lambda
// and API Gateway request ids and the DynamoDB capacity the request
// consumed (MeterCapacity asks DynamoDB for it on every call).
package lambdafn
