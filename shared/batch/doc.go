// Package batch is the codec for entity group transactions (POST /$batch):
// it parses the multipart/mixed request into operations and writes the
// multipart/mixed response byte for byte as Azure does. It does not execute
// anything; the caller runs the parsed operations atomically and hands the
// results back to a writer here.
//
// Reference: "Performing entity group transactions" in the Azure Storage REST
// reference, the OData v3 batch format it builds on, and what the official
// SDKs send and parse (Go aztables, JS @azure/data-tables, .NET
// Azure.Data.Tables, Python azure-data-tables).
//
// # Request
//
// The grammar Parse accepts (RFC 2046 multipart, OData v3 batch):
//
//	batch      = preamble? "--" B CRLF part ( CRLF "--" B CRLF part )* CRLF "--" B "--" epilogue?
//	part       = changeset-part | query-part
//	changeset-part = "Content-Type: multipart/mixed; boundary=" C CRLF CRLF changeset
//	changeset  = preamble? ( "--" C CRLF operation )* "--" C "--" epilogue?
//	operation  = "Content-Type: application/http" CRLF
//	             ["Content-Transfer-Encoding: binary" CRLF] ["Content-ID: " id CRLF] CRLF
//	             method SP url SP "HTTP/1.1" CRLF *(header CRLF) CRLF [json-body]
//	query-part = operation whose method is GET
//
// Exactly one part is allowed: one changeset of up to 100 insert, update,
// merge or delete operations, or one lone GET (a point read or a query)
// placed directly in the batch. A changeset of no operations parses to a
// Request without operations: Azure answers it 202 with an empty
// changeset response (AppendResponse of no parts). Azure says a query "must be submitted
// singly in the batch".
//
// Tolerances, each because a real client needs it:
//   - Bare LF line endings as well as CRLF.
//   - A preamble before the first boundary and an epilogue after the last.
//     The JS SDK writes an empty line before the first changeset boundary.
//   - A final boundary without the closing "--". The REST reference's own
//     sample request and older JS SDKs end with "--batch_<id>" and Azure
//     accepts it.
//   - Quoted or bare boundary parameters.
//   - Blank lines before the request line, and whitespace around the JSON
//     body. The JS SDK puts an extra CRLF before every body.
//   - An origin-form URL ("/t" or "/acct/t"), with or without a Host
//     header. The legacy Python SDK sends it without one, and Azure
//     accepts it.
//   - Content-ID either as a MIME part header (Python sends 0, 1, ...) or
//     inside the embedded request (legacy Node SDK). OData asks servers to
//     accept both.
//
// Header blocks (the MIME headers of a part and the embedded request's
// headers) are read by net/textproto's rules, obsolete line folding
// included; header.go reads them by hand for speed and a differential test
// holds it to textproto.
//
// Parse reads the body from a reader. A caller that knows the length
// (Content-Length) calls ReadBody(r.Body, r.ContentLength) and ParseBytes
// instead, so the body is read once into a buffer of its size. The parsed
// operations' bodies alias that buffer; their other strings share one copy
// of it.
//
// Verbs: POST, PUT, PATCH, MERGE, DELETE inside a changeset, and POST with
// X-HTTP-Method set to MERGE, PATCH, PUT or DELETE, which is what the Go and
// .NET SDKs send to Cosmos DB. Operation.Method holds the verb after that
// tunnel is resolved, by the rule a request of its own follows
// (operation.EffectiveMethod). Which Table operation an embedded request
// is, the codec does not say: the caller resolves it through
// shared/operation's table as it resolves a request of its own.
//
// # Errors
//
// Parse returns two kinds of error. Both unwrap to a 4xx *apierr.Error.
//
//   - A plain *apierr.Error rejects the whole request: the caller answers
//     with that status. Examples are a body over 4 MiB (413
//     RequestBodyTooLarge), a body that is not a batch, a second
//     changeset, or an operation whose headers frame its body otherwise
//     than the changeset does: a Content-Length other than the body's length
//     (with or without the whitespace around it), two that disagree, or a
//     Transfer-Encoding (400 InvalidInput), or a Content-MD5 of another
//     body (400 Md5Mismatch). Those would let another parser on the way
//     read a different request than the one applied.
//   - An *OperationError blames one operation by its 0-based index. Azure
//     reports these inside a 202 response, as a failed changeset. The caller
//     writes it with WriteFailure. More than 100 operations is the case
//     recorded from Azure: index 0, 400 InvalidInput, "The batch request
//     operation exceeds the maximum 100 changes per change set.". A
//     malformed embedded request, a verb that is not allowed, a GET inside
//     the changeset, or a bad X-HTTP-Method are reported the same way;
//     Azure does not document its answer to these.
//
// The rules that need the resolved keys are the caller's to check: one table,
// one PartitionKey, and each entity at most once (tables.Service.Batch
// answers CommandsInBatchActOnDifferentPartitions and InvalidDuplicateRow
// with the failing operation's index).
//
// # Response
//
// A changeset response is always 202 Accepted with Content-Type
// "multipart/mixed; boundary=batchresponse_<id>". The bytes match what
// Azure sends, recorded from real responses:
//
//	--batchresponse_<id>CRLF
//	Content-Type: multipart/mixed; boundary=changesetresponse_<id>CRLF
//	CRLF
//	--changesetresponse_<id>CRLF
//	Content-Type: application/httpCRLF
//	Content-Transfer-Encoding: binaryCRLF
//	CRLF
//	HTTP/1.1 204 No ContentCRLF
//	X-Content-Type-Options: nosniffCRLF
//	...CRLF
//	CRLF
//	[body]CRLF
//	--changesetresponse_<id>--CRLF
//	--batchresponse_<id>--CRLF
//
// The CRLFs after both closing boundaries are Azure's and are kept:
// aztables v1.4.1 happens to tolerate their absence, but parsers that read
// line by line (.NET's, Python's email package) are written against
// Azure's bytes. A failed changeset holds one part: the failing operation's status
// and an odata.error whose message starts with the operation's 0-based
// index ("2:The specified entity already exists.\nRequestId:...\nTime:...").
// The .NET SDK reads FailedTransactionActionIndex from that prefix with the
// pattern `"value":"(\d+):`, so the JSON is written compact. The JS SDK
// finds the error body with a single-line pattern, so it stays on one line.
// A lone GET's response part sits directly in the batch, with no changeset
// around it.
//
// Header order in each part follows the recorded Azure responses. Those
// responses are in testdata and the golden tests rebuild them byte for byte.
//   - 204: Content-ID, X-Content-Type-Options, Cache-Control,
//     Preference-Applied, DataServiceVersion, Location, DataServiceId, ETag.
//   - 200 and 201 with a body: DataServiceVersion, Content-Type, Content-ID,
//     X-Content-Type-Options, Cache-Control, Preference-Applied, Location,
//     ETag.
//   - Errors: Content-ID, X-Content-Type-Options, DataServiceVersion,
//     Content-Type.
//
// Inserts answer "DataServiceVersion: 3.0;". Updates, merges, upserts and
// deletes answer "1.0;". A Content-ID is echoed inside the embedded
// response, where Azure writes it. The .NET parser only looks for
// Content-ID among the MIME part headers, so it keeps the parts in order,
// as it does with Azure.
//
// Boundary ids, request ids and times are passed in, so output is
// byte-stable in tests. The Append forms of the writers (AppendResponse,
// AppendFailure, AppendQueryResponse) build the response in one buffer
// sized up front, for a caller that sends bytes.
package batch
