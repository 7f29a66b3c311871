// Package lambdafn runs the Table REST API as Lambda functions behind an API
// Gateway REST API (Lambda proxy integration, payload format 1.0): the
// functions of the deployment and their routes (Functions), the adapter
// between API Gateway events and http.Request (NewRequest, Serve, on
// aws-lambda-go and aws-lambda-go-api-proxy's response writer), the
// configuration from the environment (LoadConfig), and Main, which every
// functions/<name>/main.go calls.
//
// # Why payload format 1.0
//
// The proxy library's payload-2.0 adapter splits every header value on
// commas, which breaks "x-ms-date: Sun, 11 Oct 2009 21:49:42 GMT" and with
// it every Shared Key signature. A REST API (AWS::Serverless::Api) sends
// format 1.0, whose multiValueHeaders keep each value whole.
//
// # Paths and signatures
//
// Shared Key signs the path the client sent, and on the execute-api domain
// that path starts with the stage ("/Prod/acct/Tables"), which the event's
// path leaves out; on a custom domain it starts with the base path, which
// the event's path keeps. requestContext.path always holds what the client
// sent. NewRequest routes on the part the resource template matched and
// hands the handler the full path through httpapi.WithSignedPath; the
// handler also puts the prefix into odata.metadata and Location URLs.
// A REST API keeps both paths percent-encoded exactly as the client sent
// them, and the signature is verified over that spelling only. An HTTP API
// (payload 2.0) would deliver the path decoded, and a decoded path can
// spell another entity's wire path (x%2520y, the path of the key 'x%20y',
// decodes to x%20y, the path of 'x y'): one more reason the deployment is
// a REST API.
//
// # One function per operation
//
// API Gateway path parameters are whole segments and literal path parts
// may not hold "(", "'" or "$", so GET /{account}/{resource} carries Query
// Entities, Get Entity, Get Table (Tables('t')) and Get Table ACL alike;
// such a group is one function, which tells them apart itself. Each
// function reaches only the store methods of its own operations: anything
// else is refused with 405 MethodNotAllowed rather than failing in DynamoDB
// for want of an IAM permission (see guardStore). template.yaml grants each
// function exactly the DynamoDB actions of those store methods
// (Function.DynamoDBActions); a test in functions/ compares the two.
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
